#include "form_options.h"

#include "args.h"
#include "common.h"
#include "names.h"
#include "pe/check/check.h"
#include "pe/check/npy.h"
#include "sinusoidal_options.h"

namespace pe::cli {

void add_form_options(CLI::App& cmd, FormFlags& f) {
  cmd.add_option("--mrope-section", f.mrope_section_text,
                 "RoPE: M-RoPE pairs per axis t,h,w[,e] (Qwen2.5-VL: 16,24,24); positions [axes, T]");
  cmd.add_option("--mrope-layout", f.mrope_layout,
                 "RoPE: sectioned (Qwen2-VL, Qwen2.5-VL; default), interleaved (Qwen3-VL) or ernie "
                 "(ERNIE-4.5-VL's [h w h w ... t t], sections t,h,w with h == w)");
  cmd.add_option("--vision", f.vision, "RoPE: 2-D vision RoPE qwen2vl or pixtral; positions [2, T] (h, w)");
  cmd.add_option("--axes-dim", f.axes_dim_text,
                 "RoPE: axial N-D RoPE, channels per axis, each axis its own ladder (Flux: 16,56,56; "
                 "diffusers' axes_dim); positions [axes, T]");
  cmd.add_option("--rotary-offset", f.spec.rotary_offset,
                 "RoPE: first rotated channel (DeepSeek MLA q = [nope 128 | pe 64]: 128)");
}

namespace {
// "16,24,24" as integers; UsageError naming `flag` for a part that is not one.
std::vector<std::int64_t> int_list(const std::string& text, const char* flag) {
  std::vector<std::int64_t> out;
  for (std::size_t start = 0; !text.empty() && start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(parse_int(text.substr(start, comma - start), flag));
    start = comma + 1;
  }
  return out;
}
}  // namespace

void read_form_flags(const CLI::App& cmd, FormFlags& f) {
  const check::Names names = flag_names();
  check::FormSpec& s = f.spec;
  if (cmd.count("--mrope-section") > 0) s.mrope_section = int_list(f.mrope_section_text, "--mrope-section");
  if (cmd.count("--axes-dim") > 0) s.axes_dim = int_list(f.axes_dim_text, "--axes-dim");
  if (cmd.count("--mrope-layout") > 0) s.mrope_layout = check::parse_mrope_layout(f.mrope_layout, names);
  if (cmd.count("--vision") > 0) s.vision = check::parse_vision(f.vision, names);
}

RopeForm to_rope_form(const check::FormSpec& spec) { return check::to_rope_form(spec, flag_names()); }

void reject_form_flags(const FormFlags& f, const std::string& why) {
  check::reject_form(f.spec, flag_names(), why);
}

// A float .npy that holds a non-integer (or a negative) value gives real positions, exact as stored (the
// engine refuses a non-finite one, naming --positions-file); anything else today's integers.
check::Positions rope_positions_of(const std::string& range, const std::string& file) {
  if (!holds_real_positions(file)) return positions_of(range, file);
  if (!range.empty()) throw UsageError("--positions or --positions-file: give exactly one");
  check::NpyArray a = check::read_npy(file);
  check::Positions p;
  p.real = std::move(a.values);
  p.shape = std::move(a.shape);
  p.source = file;
  p.parameter = "positions_file";
  return p;
}

check::Positions positions_of(const std::string& range, const std::string& file) {
  check::Positions p;
  p.values = positions_from(range, file);
  p.every_axis = !range.empty();
  if (!file.empty()) {
    p.source = file;
    p.parameter = "positions_file";
    if (file.ends_with(".npy")) p.shape = check::read_npy(file).shape;
  }
  return p;
}

std::vector<std::int64_t> axis_positions_from(const std::string& range, const std::string& file,
                                              std::size_t n_axes, const check::FormSpec& form) {
  return check::axis_positions(
      positions_of(range, file), n_axes, check::axes_parameter(form),
      flag_names({{"positions_file", "--positions-file"}, {"positions", "--positions"}}));
}

}  // namespace pe::cli
