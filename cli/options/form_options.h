// The rotary-form flags shared by export, check, census and bench (--mrope-section, --mrope-layout,
// --vision, --axes-dim, --rotary-offset) into check::FormSpec, and the multi-axis positions they read.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/check/check.h"
#include "pe/check/spec.h"

namespace pe::cli {

// What CLI11 parses into; `spec` holds the flags given, typed, once read_form_flags has run.
struct FormFlags {
  std::string mrope_section_text;  // "16,24,24"
  std::string axes_dim_text;       // "16,56,56"
  std::string mrope_layout, vision;
  check::FormSpec spec;  // rotary_offset straight from the parse
};

// Adds the flags to `cmd`, storing into `flags` (which must outlive the parse).
void add_form_options(CLI::App& cmd, FormFlags& flags);
// After parsing: the flags `cmd` was given into flags.spec; UsageError naming --mrope-section for a part
// or --axes-dim part that is not an integer, --mrope-layout or --vision for an unknown value.
void read_form_flags(const CLI::App& cmd, FormFlags& flags);

// The conversions under the shared flag names.
RopeForm to_rope_form(const check::FormSpec& spec);
void reject_form_flags(const FormFlags& flags, const std::string& why);

// Positions [n_axes][tokens]: --positions A:B gives every axis the same range (a text prompt under
// M-RoPE); --positions-file a .npy of shape [n_axes, T] or [n_axes, 1, T] (HF's position_ids for one
// sequence) when n_axes > 1, else any 1-D list.
check::Positions positions_of(const std::string& range, const std::string& file);
// RoPE's positions: positions_of's, or real ones where --positions-file is a float .npy holding a non-integer
// (or negative) value (check and export read them alike).
check::Positions rope_positions_of(const std::string& range, const std::string& file);
std::vector<std::int64_t> axis_positions_from(const std::string& range, const std::string& file,
                                              std::size_t n_axes, const check::FormSpec& form);

}  // namespace pe::cli
