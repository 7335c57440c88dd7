// The rotary-form flags shared by export, check, census and bench (--mrope-section, --mrope-layout,
// --vision, --rotary-offset) and the multi-axis positions they read: the flags become a RopeForm and
// an offset; RopePlan checks the values (rope_plan() names the flag).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/plan.h"
#include "pe/rope_form.h"

namespace pe::cli {

struct FormFlags {
  std::string mrope_section;  // "16,24,24": pairs per axis t, h, w (and e)
  std::string mrope_layout;   // sectioned (default) or interleaved
  std::string vision;         // qwen2vl or pixtral
  std::int64_t rotary_offset = 0;
};

// Adds the flags to `cmd`, storing into `flags` (which must outlive the parse).
void add_form_options(CLI::App& cmd, FormFlags& flags);
// The form the flags describe. UsageError naming the flag for an unparsable section list, an unknown
// layout or vision form, --mrope-layout without --mrope-section, or --vision with --mrope-section.
RopeForm to_rope_form(const FormFlags& flags);
// params with the form and the offset applied.
RopeParams with_form(RopeParams params, const FormFlags& flags);
// UsageError when any form flag is given (they apply to RoPE only).
void reject_form_flags(const FormFlags& flags, const std::string& why);
// The flag of a form parameter InvalidArgument names ("mrope_section" -> "--mrope-section"); "" if none.
std::string form_flag_for_parameter(const std::string& parameter);
// One phrase for headers: "M-RoPE sectioned 16,24,24", "vision qwen2vl", "rotary at 128"; "" for text.
std::string describe_form(const RopeParams& params);

// Positions [n_axes][tokens]: --positions A:B gives every axis the same range (a text prompt under
// M-RoPE); --positions-file a .npy of shape [n_axes, T] or [n_axes, 1, T] (HF's position_ids for one
// sequence) when n_axes > 1, else any 1-D list. UsageError naming the option when the file's axis
// count is not n_axes (the flag that set n_axes named too).
std::vector<std::int64_t> axis_positions_from(const std::string& range, const std::string& file,
                                              std::size_t n_axes, const std::string& axes_from);
// "--mrope-section" or "--vision": what made the form multi-axis, for messages.
std::string axes_flag(const FormFlags& flags);

}  // namespace pe::cli
