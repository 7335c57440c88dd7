// What an ALiBi array that fails its check fits instead: the mistakes engines ship, each a whole
// model of the data (slopes by the other rule, the exponent off by one either way, the sign flipped,
// another form, queries and keys transposed), compared on a sample of elements in long double.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pe/alibi.h"

namespace pe::check {

struct AlibiFit {
  std::string description;  // "the conventions given", "the direct rule 2^(-b(h+1)/n)", ...
  double residual = 0;      // max |data - model| / max |model| over the sample
};

// Best fit first. `data` is [heads] slopes when `keys` is empty, else [heads, queries, keys].
std::vector<AlibiFit> diagnose_alibi(std::span<const double> data, const AlibiParams& given,
                                     std::span<const std::int64_t> queries,
                                     std::span<const std::int64_t> keys);

}  // namespace pe::check
