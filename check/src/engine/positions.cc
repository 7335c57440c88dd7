// The positions and the batch view of a request's data (check.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pe/check/check.h"
#include "pe/plan.h"

namespace pe::check {
void validate_positions(const Positions& p, const Names& names) {
  const std::string where = p.source.empty() ? "" : p.source + " ";
  if (p.values.empty())
    names.fail(p.parameter, fmt::format("no positions{}", p.source.empty() ? "" : " in '" + p.source + "'"));
  for (std::int64_t v : p.values) {
    if (v < 0 || v > kMaxPosition)
      names.fail(p.parameter, fmt::format("{}holds {}, not a position in [0, 2^53]", where, v));
  }
}

std::vector<std::int64_t> axis_positions(const Positions& p, std::size_t n_axes,
                                         std::string_view axes_parameter, const Names& names) {
  std::vector<std::size_t> shape = p.shape.empty() ? std::vector<std::size_t>{p.values.size()} : p.shape;
  const std::string what = p.source.empty() ? "it" : p.source;
  if (n_axes == 1) {
    if (!p.every_axis && shape.size() >= 2 && shape.front() > 1)
      names.fail(p.parameter, fmt::format("{} holds [{}] positions: {} axes need {} or {}",
                                          p.source.empty() ? "the array" : p.source, fmt::join(shape, ", "),
                                          shape.front(), names("mrope_section"), names("vision")));
    return p.values;
  }
  if (p.every_axis) {  // every axis the same: text tokens under M-RoPE
    std::vector<std::int64_t> out;
    for (std::size_t a = 0; a < n_axes; ++a) out.insert(out.end(), p.values.begin(), p.values.end());
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
  return p.values;
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
