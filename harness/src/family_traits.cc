#include "pe/harness/family_traits.h"

#include <numeric>
#include <set>
#include <stdexcept>

namespace pe::harness {

std::span<const FamilyTraits* const> family_traits() {
  static const FamilyTraits* const rows[] = {&sinusoidal_traits(), &rope_traits(), &alibi_traits()};
  return rows;
}

const FamilyTraits& traits_of(Family f) {
  for (const FamilyTraits* t : family_traits()) {
    if (t->family == f) return *t;
  }
  throw std::logic_error("no FamilyTraits row for family " + std::string(to_string(f)));
}

const FamilyTraits* traits_named(std::string_view name) {
  for (const FamilyTraits* t : family_traits()) {
    if (t->name == name) return t;
  }
  return nullptr;
}

Sample bench_sample(std::size_t rows, std::size_t pairs) {
  const std::set<std::size_t> r = {0, rows / 2, rows - 1};
  std::set<std::size_t> p;
  for (std::size_t k = 0; k < 16; ++k) p.insert(k * (pairs - 1) / 15);
  return {{r.begin(), r.end()}, {p.begin(), p.end()}};
}

std::vector<std::int64_t> bench_positions(std::size_t n, bool far) {
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), far ? std::int64_t{1} << 20 : 0);
  return p;
}

}  // namespace pe::harness
