// A check's pass in parts on threads (RoPE's screened pass, the FP8 codes' runs): the parts' own work, one
// way of starting, ending and failing.
#pragma once

#include <cstddef>
#include <functional>

namespace pe::check {

// part(k) for every k in [0, n): k >= 1 each on a thread of its own (its MPFR constants freed as it ends),
// part 0 on the calling thread (its constants kept for its next check). Every started thread is joined
// before anything is rethrown: first a thread that could not start (part 0 then not run), else the first
// part's exception in part order.
void in_parts(std::size_t n, const std::function<void(std::size_t)>& part);

}  // namespace pe::check
