// Large arrays whose first touch is cheap: a fresh 4 KiB page's first touch costs microseconds on a virtual
// machine (about 12 µs on the machines this project runs on), a 2 MiB page's about 500 times less per byte.
#pragma once

#include <cstddef>
#include <vector>

namespace pe::harness {

// v.reserve(n), with transparent huge pages asked for on the new allocation's 2 MiB-aligned part before
// anything touches it. Only a hint: the contents and the size are reserve's.
void reserve_large(std::vector<double>& v, std::size_t n);

}  // namespace pe::harness
