#include "pe/harness/pieces.h"

#include <algorithm>
#include <cstring>

#include "pe/harness/family_traits.h"

namespace pe::harness {

std::vector<std::size_t> direct_rows(std::span<const std::int64_t> positions, std::int64_t state_rows) {
  std::vector<std::size_t> out;
  std::int64_t advanced = 0;
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (r > 0 && positions[r] == positions[r - 1] + 1 && advanced < state_rows) {
      ++advanced;
      continue;
    }
    out.push_back(r);
    advanced = 0;
  }
  return out;
}

std::size_t elements_per_position(const Instance& in, std::int64_t dim, std::int64_t heads) {
  const FamilyTraits& t = traits_of(in.variant->family());
  return static_cast<std::size_t>(dim) * static_cast<std::size_t>(t.has_heads ? heads : 1);
}

TypedBuffer run_call(const Instance& in, std::int64_t dim, double base,
                     std::span<const std::int64_t> positions, std::int64_t heads, std::span<const double> x) {
  const FamilyTraits& t = traits_of(in.variant->family());
  TypedBuffer b(in.dtype, positions.size() * elements_per_position(in, dim, heads));
  if (t.reads_data) {
    for (std::size_t i = 0; i < b.size(); ++i) b.set(i, x[i]);
  }
  t.call(*in.variant, in.layout, dim, base, positions, b.view(), heads);
  return b;
}

TypedBuffer run_in_pieces(const Instance& in, std::int64_t dim, double base,
                          std::span<const std::int64_t> positions, std::int64_t heads,
                          std::span<const double> x, std::span<const std::size_t> splits) {
  const std::size_t row = elements_per_position(in, dim, heads), width = row * size_of(in.dtype);
  TypedBuffer out(in.dtype, positions.size() * row);
  std::vector<std::size_t> ends(splits.begin(), splits.end());
  ends.push_back(positions.size());
  std::size_t begin = 0;
  for (std::size_t end : ends) {
    if (end <= begin) continue;
    const std::span<const double> piece_x = x.empty() ? x : x.subspan(begin * row, (end - begin) * row);
    TypedBuffer piece = run_call(in, dim, base, positions.subspan(begin, end - begin), heads, piece_x);
    std::memcpy(static_cast<unsigned char*>(out.view().data) + begin * width, piece.view().data,
                (end - begin) * width);
    begin = end;
  }
  return out;
}

std::vector<std::size_t> differing_elements(const TypedBuffer& a, const TypedBuffer& b) {
  const std::size_t w = size_of(a.dtype());
  const auto x = a.bytes(), y = b.bytes();
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::equal(x.begin() + i * w, x.begin() + (i + 1) * w, y.begin() + i * w)) out.push_back(i);
  }
  return out;
}

}  // namespace pe::harness
