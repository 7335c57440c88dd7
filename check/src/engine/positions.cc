// The positions and the batch view of a request's data (check.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "pe/check/check.h"
#include "pe/plan.h"

namespace pe::check {
namespace {

// Real positions: finite, |t| <= 2^53 (the integers' bound: the reference's tier and the class's float32
// promise of 2^24 are read from the magnitude), and 0 or a normal float32 magnitude (|t| >= 2^-126): a
// float32 angle rounds fl(t) relatively only there (docs/contracts.md §2a), so no contract charges a
// subnormal one.
void validate_real_positions(const Positions& p, const Names& names) {
  const std::string where = p.source.empty() ? "" : p.source + " ";
  for (std::size_t i = 0; i < p.real.size(); ++i) {
    const double v = p.real[i];
    if (!std::isfinite(v))
      names.fail(p.parameter, fmt::format("{}holds {} at flat index {}, not a finite position", where, v, i));
    if (std::fabs(v) > static_cast<double>(kMaxPosition))
      names.fail(p.parameter, fmt::format("{}holds {} at flat index {}, beyond the real positions' bound "
                                          "|t| <= 2^53",
                                          where, v, i));
    if (v != 0 && std::fabs(v) < 0x1p-126)
      names.fail(
          p.parameter,
          fmt::format("{}holds {} at flat index {}: a real position is 0 or at least 2^-126 in magnitude "
                      "(a float32 angle's fl(t) is relative only there)",
                      where, v, i));
  }
}

// [n_axes][tokens] for a form with n_axes axes, of the integer or the real values.
template <class T>
std::vector<T> axis_values(const Positions& p, const std::vector<T>& values, std::size_t n_axes,
                           std::string_view axes_parameter, const Names& names) {
  std::vector<std::size_t> shape = p.shape.empty() ? std::vector<std::size_t>{values.size()} : p.shape;
  const std::string what = p.source.empty() ? "it" : p.source;
  if (n_axes == 1) {
    if (!p.every_axis && shape.size() >= 2 && shape.front() > 1)
      names.fail(p.parameter, fmt::format("{} holds [{}] positions: {} axes need {} or {}",
                                          p.source.empty() ? "the array" : p.source, fmt::join(shape, ", "),
                                          shape.front(), names("mrope_section"), names("vision")));
    return values;
  }
  if (p.every_axis) {  // every axis the same: text tokens under M-RoPE
    std::vector<T> out;
    for (std::size_t a = 0; a < n_axes; ++a) out.insert(out.end(), values.begin(), values.end());
    return out;
  }
  if (shape.size() == 3 && shape[1] == 1) shape.erase(shape.begin() + 1);
  if (shape.size() != 2)
    names.fail(p.parameter, fmt::format("{} needs [n_axes, T] positions ({} gives {} axes); {} has rank {}",
                                        p.source.empty() ? "the array" : p.source, names(axes_parameter),
                                        n_axes, what, shape.size()));
  if (shape[0] != n_axes)
    names.fail(p.parameter, fmt::format("{} has {} axes ([{}, {}]), {} gives {}",
                                        p.source.empty() ? "the array" : p.source, shape[0], shape[0],
                                        shape[1], names(axes_parameter), n_axes));
  return values;
}

}  // namespace

void validate_positions(const Positions& p, const Names& names) {
  const std::string where = p.source.empty() ? "" : p.source + " ";
  if (!p.real.empty()) return validate_real_positions(p, names);
  if (p.values.empty())
    names.fail(p.parameter, fmt::format("no positions{}", p.source.empty() ? "" : " in '" + p.source + "'"));
  for (std::int64_t v : p.values) {
    if (v < 0 || v > kMaxPosition)
      names.fail(p.parameter, fmt::format("{}holds {}, not a position in [0, 2^53]", where, v));
  }
}

std::vector<std::int64_t> axis_positions(const Positions& p, std::size_t n_axes,
                                         std::string_view axes_parameter, const Names& names) {
  return axis_values(p, p.values, n_axes, axes_parameter, names);
}

std::vector<double> axis_real_positions(const Positions& p, std::size_t n_axes,
                                        std::string_view axes_parameter, const Names& names) {
  return axis_values(p, p.real, n_axes, axes_parameter, names);
}

std::vector<std::int64_t> band_keys(std::span<const double> real) {
  std::vector<std::int64_t> keys(real.size());
  for (std::size_t i = 0; i < real.size(); ++i)
    keys[i] = static_cast<std::int64_t>(std::ceil(std::fabs(real[i])));
  return keys;
}

RopeBatch rope_batch_of(std::vector<std::size_t> s, const std::vector<std::int64_t>& positions,
                        bool heads_first, const std::string& name, std::size_t n_axes,
                        const std::string& heads_first_flag) {
  const std::size_t rank = s.size();
  const std::string shape = fmt::format("[{}]", fmt::join(s, ", "));
  if (s.size() == 4 && s[0] == 1) s.erase(s.begin());
  // 2-D data has no heads axis for the flag to move: taking it anyway would hide a caller's wrong shape.
  if (s.size() == 2 && heads_first)
    throw BadRequest(fmt::format("{} given, but {} has shape {} ([tokens, head_dim]): no heads axis to put "
                                 "first (give [heads, tokens, head_dim] data, or drop it)",
                                 heads_first_flag, name, shape),
                     "heads_first");
  if (s.size() == 2) s.insert(s.begin() + 1, 1);
  if (s.size() != 3)
    throw BadRequest(fmt::format("{}: expected [tokens, (heads,) head_dim], shape has rank {}", name, rank));
  const std::size_t t = heads_first ? s[1] : s[0], heads = heads_first ? s[0] : s[1];
  const std::size_t tokens = positions.size() / n_axes;
  if (t != tokens) {
    // The other reading of the shape, when it matches the positions: the layout flag is the mistake.
    const std::size_t other = heads_first ? s[0] : s[1];
    const std::string hint =
        other != tokens ? ""
        : heads_first
            ? fmt::format("; read as [tokens, heads, head_dim] it holds {}: drop {}", other, heads_first_flag)
            : fmt::format("; read as [heads, tokens, head_dim] it holds {}: give {}", other,
                          heads_first_flag);
    throw BadRequest(
        fmt::format("{}: shape {} read as {} holds {} tokens, the positions are {}{}{}", name, shape,
                    heads_first ? "[heads, tokens, head_dim] (" + heads_first_flag + ")"
                                : std::string("[tokens, heads, head_dim]"),
                    t, tokens, n_axes > 1 ? fmt::format(" per axis ({} axes)", n_axes) : "", hint),
        "heads_first");
  }
  RopeBatch b = heads_first ? RopeBatch::heads_first(std::span(positions).first(tokens), heads, s[2])
                            : RopeBatch::tokens_first(std::span(positions).first(tokens), heads, s[2]);
  b.positions = positions;
  b.n_axes = n_axes;
  return b;
}

}  // namespace pe::check
