// M-RoPE test data: x rotated pair by pair by a kernel's sections (the given plan's frequencies: M-RoPE's
// are the text ones), in float64, at three axes' positions the test chooses.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/plan.h"

namespace pe::check::mrope_testing {

// How the axes' positions relate to the token's p: each its own (t = p, h = 5p/8 + 3, w = 3p/13 + 1,
// verify_rope's probe), h and w one position (5p/8 + 3), or every axis p (text tokens).
enum class Axes { Distinct, SameHW, SameAll };

struct MropeData {
  std::size_t head_dim = 0, heads = 2, tokens = 24;
  std::vector<std::int64_t> positions;  // [3][tokens]
  std::vector<double> x, y;
  RopeData data() const {
    return {x, y, RopeBatch{positions, 3, heads, heads * head_dim, head_dim}, head_dim, head_dim, {}, 0};
  }
};

inline std::int64_t axis_position(Axes axes, std::size_t a, std::int64_t p) {
  if (a == 0 || axes == Axes::SameAll) return p;
  if (a == 1 || axes == Axes::SameHW) return 5 * p / 8 + 3;
  return 3 * p / 13 + 1;
}

// Positions p spread up to about 5·10^4 (1.6^23; the first four 0-3): every pair turns by more than the angle
// tolerance.
inline MropeData rotated_by(const RopePlan& given, const RopeForm& kernel, Axes axes = Axes::Distinct) {
  MropeData m;
  m.head_dim = static_cast<std::size_t>(given.params().head_dim);
  std::vector<std::int64_t> p;
  for (std::size_t k = 0; k < m.tokens; ++k)
    p.push_back(k < 4 ? static_cast<std::int64_t>(k) : static_cast<std::int64_t>(std::pow(1.6, k)));
  for (std::size_t a = 0; a < 3; ++a)
    for (const std::int64_t q : p) m.positions.push_back(axis_position(axes, a, q));
  std::mt19937_64 g(7);
  std::normal_distribution<double> normal;
  m.x.resize(m.tokens * m.heads * m.head_dim);
  for (double& v : m.x) v = normal(g);
  m.y = m.x;
  const std::size_t pairs = given.n_pairs();
  for (std::size_t t = 0; t < m.tokens; ++t) {
    for (std::size_t h = 0; h < m.heads; ++h) {
      const std::size_t row = (t * m.heads + h) * m.head_dim;
      for (std::size_t j = 0; j < pairs; ++j) {
        const std::size_t axis = axis_of_pair(kernel, pairs, j);
        const double phi = static_cast<double>(m.positions[axis * m.tokens + t]) * given.inv_freq()[j];
        const auto [i0, i1] = given.input_channels(j);
        const double a = m.x[row + i0], b = m.x[row + i1];
        m.y[row + i0] = a * std::cos(phi) - b * std::sin(phi);
        m.y[row + i1] = b * std::cos(phi) + a * std::sin(phi);
      }
    }
  }
  return m;
}

inline RopeParams mrope(std::size_t head_dim, std::vector<std::int64_t> sections,
                        MropeLayout layout = MropeLayout::Sectioned) {
  const auto d = static_cast<std::int64_t>(head_dim);
  RopeParams p{d, d, 10000.0, Layout::HalfSplit};
  p.form.mrope_section = std::move(sections);
  p.form.mrope_layout = layout;
  return p;
}

}  // namespace pe::check::mrope_testing
