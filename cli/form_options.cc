#include "form_options.h"

#include <fmt/format.h>

#include <cmath>

#include "args.h"
#include "common.h"
#include "npy.h"

namespace pe::cli {

void add_form_options(CLI::App& cmd, FormFlags& f) {
  cmd.add_option("--mrope-section", f.mrope_section,
                 "RoPE: M-RoPE pairs per axis t,h,w[,e] (Qwen2.5-VL: 16,24,24); positions [axes, T]");
  cmd.add_option("--mrope-layout", f.mrope_layout,
                 "RoPE: sectioned (Qwen2-VL, Qwen2.5-VL; default) or interleaved (Qwen3-VL)");
  cmd.add_option("--vision", f.vision, "RoPE: 2-D vision RoPE qwen2vl or pixtral; positions [2, T] (h, w)");
  cmd.add_option("--rotary-offset", f.rotary_offset,
                 "RoPE: first rotated channel (DeepSeek MLA q = [nope 128 | pe 64]: 128)");
}

RopeForm to_rope_form(const FormFlags& f) {
  RopeForm form;
  if (!f.mrope_section.empty()) {
    std::size_t start = 0;
    while (start <= f.mrope_section.size()) {
      const std::size_t comma = std::min(f.mrope_section.find(',', start), f.mrope_section.size());
      form.mrope_section.push_back(
          parse_int(f.mrope_section.substr(start, comma - start), "--mrope-section"));
      start = comma + 1;
    }
  }
  if (!f.mrope_layout.empty()) {
    if (f.mrope_section.empty()) throw UsageError("--mrope-layout: applies with --mrope-section");
    const auto l = parse_mrope_layout(f.mrope_layout);
    if (!l) throw UsageError("--mrope-layout: sectioned or interleaved, got '" + f.mrope_layout + "'");
    form.mrope_layout = *l;
  }
  if (!f.vision.empty()) {
    const auto v = parse_vision_rope(f.vision);
    if (!v || *v == VisionRope::None)
      throw UsageError("--vision: qwen2vl or pixtral, got '" + f.vision + "'");
    if (!f.mrope_section.empty()) throw UsageError("--vision: give --vision or --mrope-section, not both");
    form.vision = *v;
  }
  return form;
}

RopeParams with_form(RopeParams params, const FormFlags& flags) {
  params.form = to_rope_form(flags);
  params.rotary_offset = flags.rotary_offset;
  return params;
}

void reject_form_flags(const FormFlags& f, const std::string& why) {
  for (const auto& [flag, given] :
       {std::pair{"--mrope-section", !f.mrope_section.empty()},
        std::pair{"--mrope-layout", !f.mrope_layout.empty()}, std::pair{"--vision", !f.vision.empty()},
        std::pair{"--rotary-offset", f.rotary_offset != 0}}) {
    if (given) throw UsageError(std::string(flag) + ": " + why);
  }
}

std::string form_flag_for_parameter(const std::string& parameter) {
  if (parameter == "mrope_section") return "--mrope-section";
  if (parameter == "vision") return "--vision";
  if (parameter == "rotary_offset") return "--rotary-offset";
  return "";
}

std::string describe_form(const RopeParams& p) {
  std::string out;
  if (p.form.vision != VisionRope::None) {
    out = fmt::format("vision {}", to_string(p.form.vision));
  } else if (!p.form.mrope_section.empty()) {
    out = fmt::format("M-RoPE {} {}", to_string(p.form.mrope_layout), fmt::join(p.form.mrope_section, ","));
  }
  if (p.rotary_offset != 0) out += fmt::format("{}rotary at {}", out.empty() ? "" : ", ", p.rotary_offset);
  return out;
}

std::string axes_flag(const FormFlags& f) { return !f.vision.empty() ? "--vision" : "--mrope-section"; }

std::vector<std::int64_t> axis_positions_from(const std::string& range, const std::string& file,
                                              std::size_t n_axes, const std::string& axes_from) {
  std::vector<std::int64_t> one = positions_from(range, file);
  if (n_axes == 1) {
    if (file.ends_with(".npy")) {
      const auto shape = read_npy(file).shape;
      if (shape.size() >= 2 && shape.front() > 1) {
        throw UsageError(
            fmt::format("--positions-file: {} holds [{}] positions: {} axes need --mrope-section or "
                        "--vision",
                        file, fmt::join(shape, ", "), shape.front()));
      }
    }
    return one;
  }
  if (!range.empty()) {  // every axis the same: text tokens under M-RoPE
    std::vector<std::int64_t> out;
    for (std::size_t a = 0; a < n_axes; ++a) out.insert(out.end(), one.begin(), one.end());
    return out;
  }
  std::vector<std::size_t> shape = {one.size()};
  if (file.ends_with(".npy")) shape = read_npy(file).shape;
  if (shape.size() == 3 && shape[1] == 1) shape.erase(shape.begin() + 1);
  if (shape.size() != 2) {
    throw UsageError(
        fmt::format("--positions-file: {} needs [n_axes, T] positions ({} gives {} axes); {} has "
                    "rank {}",
                    file, axes_from, n_axes, file, shape.size()));
  }
  if (shape[0] != n_axes) {
    throw UsageError(fmt::format("--positions-file: {} has {} axes ([{}, {}]), {} gives {}", file, shape[0],
                                 shape[0], shape[1], axes_from, n_axes));
  }
  return one;
}

}  // namespace pe::cli
