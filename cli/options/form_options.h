// The rotary-form flags shared by export, check, census and bench (--mrope-section, --mrope-layout,
// --vision, --rotary-offset) into check::FormOptions, and the multi-axis positions they read.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/check/check.h"
#include "pe/check/options.h"

namespace pe::cli {

struct FormFlags : check::FormOptions {
  std::string mrope_section_text;  // "16,24,24", parsed into mrope_section by read_form_flags
};

// Adds the flags to `cmd`, storing into `flags` (which must outlive the parse).
void add_form_options(CLI::App& cmd, FormFlags& flags);
// After parsing: --mrope-section's list; UsageError naming it for a part that is not an integer.
void read_form_flags(FormFlags& flags);

// The conversions under the shared flag names.
RopeForm to_rope_form(const FormFlags& flags);
RopeParams with_form(RopeParams params, const FormFlags& flags);
void reject_form_flags(const FormFlags& flags, const std::string& why);

// Positions [n_axes][tokens]: --positions A:B gives every axis the same range (a text prompt under
// M-RoPE); --positions-file a .npy of shape [n_axes, T] or [n_axes, 1, T] (HF's position_ids for one
// sequence) when n_axes > 1, else any 1-D list.
check::Positions positions_of(const std::string& range, const std::string& file);
std::vector<std::int64_t> axis_positions_from(const std::string& range, const std::string& file,
                                              std::size_t n_axes, const FormFlags& form);

}  // namespace pe::cli
