#include "explain/axial_candidates.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <tuple>

namespace pe::check {
namespace {

// Every order of an axial form's axes is a permutation Convention::axes can hold.
static_assert(std::tuple_size_v<decltype(Convention::axes)> >= kMaxAxialAxes);

// The frequencies of `form` at `base` with axis `axis`'s exponent over `dim` instead of its own.
std::shared_ptr<const std::vector<long double>> ladder_over(const RopeForm& form, std::size_t pairs,
                                                            double base, std::size_t axis, std::size_t dim) {
  auto w = std::make_shared<std::vector<long double>>(pairs);
  for (std::size_t j = 0; j < pairs; ++j) {
    const FrequencyIndex f = frequency_index(form, pairs, j);
    const std::size_t over = axis_of_pair(form, pairs, j) == axis ? dim : f.dim;
    (*w)[j] = std::pow(static_cast<long double>(base),
                       -2.0L * static_cast<long double>(f.index) / static_cast<long double>(over));
  }
  return w;
}

}  // namespace

void axial_candidates(const Convention& given, std::size_t pairs, std::vector<Convention>& out) {
  const std::vector<std::int64_t>& dims = given.form.axes_dim;
  if (dims.empty()) return;
  // The dims listed in another order, each block still reading its own axis; and the blocks themselves
  // concatenated in another order (block a of the data is axis π(a)'s, with its dim and positions).
  std::vector<std::int64_t> order = dims;
  std::sort(order.begin(), order.end());
  do {
    if (order == dims) continue;
    Convention c = given;
    c.form.axes_dim = order;
    out.push_back(c);
  } while (std::next_permutation(order.begin(), order.end()));
  std::array<std::uint8_t, 4> perm = {0, 1, 2, 3};
  const std::size_t n = std::min<std::size_t>(dims.size(), perm.size());
  while (std::next_permutation(perm.data(), perm.data() + n)) {
    Convention c = given;
    std::vector<std::int64_t> moved(dims.begin(), dims.end()), read(n);
    for (std::size_t a = 0; a < n; ++a) {
      moved[a] = dims[perm[a]];
      read[a] = perm[a];
    }
    c.form.axes_dim = moved;
    c.axes = perm;
    c.label = fmt::format("the axis blocks concatenated in the order ({}): axes_dim {} (given: {})",
                          fmt::join(read, ", "), fmt::join(moved, ","), fmt::join(dims, ","));
    out.push_back(c);
  }
  for (std::size_t a = 0; a < dims.size(); ++a) {
    const auto own = static_cast<std::size_t>(dims[a]);
    for (const std::size_t over : {2 * own, own / 2}) {
      if (over < 2) continue;
      Convention c = given;
      c.inv_freq = ladder_over(given.form, pairs, given.base, a, over);
      c.label = fmt::format("axis {}'s ladder over {} where its dim is {} (θ^(-2k/{}))", a, over, own, over);
      out.push_back(c);
    }
  }
  for (const double base : {256.0, 10000.0}) {
    if (base == given.base) continue;
    Convention c = given;
    c.base = base;
    out.push_back(c);
  }
}

}  // namespace pe::check
