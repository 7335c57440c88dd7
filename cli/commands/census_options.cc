#include "census_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common.h"
#include "names.h"
#include "pe/check/errors.h"
#include "pe/errors.h"
#include "pe/harness/family_traits.h"

namespace pe::cli {

census::Options with_flags(census::Options o, const ScalingFlags& scaling, const FormFlags& form) {
  o.scaling = to_rope_scaling(scaling);
  if (switches_per_token(o.scaling))
    throw UsageError(
        "--longrope-switch: per-token applies to check and export --reference (a variant rotates with "
        "one list per call)");
  o.form = to_rope_form(form);
  if (form.rotary_offset < 0)
    throw UsageError("--rotary-offset: must be >= 0, got " + std::to_string(form.rotary_offset));
  o.rotary_offset = form.rotary_offset;
  if (scaling.given.count("partial_rotary_factor") > 0) {
    if (!(scaling.partial_rotary_factor > 0))  // 0 would read as "not given" in census::Options
      throw UsageError(
          fmt::format("--partial-rotary-factor: must be in (0, 1], got {:g}", scaling.partial_rotary_factor));
    o.partial_rotary_factor = scaling.partial_rotary_factor;
  }
  return o;
}

std::vector<census::Options> options_per_config(const census::Options& base, const CensusFlags& flags,
                                                const CLI::App& cmd) {
  std::vector<std::string> paths = flags.hf.paths;
  if (paths.empty()) paths.push_back(flags.hf.path);
  std::set<std::string> seen;
  std::vector<census::Options> out;
  for (const std::string& path : paths) {
    if (!flags.hf.paths.empty() && path.empty()) throw UsageError("--hf-config: an empty path");
    if (!seen.insert(path).second) throw UsageError("--hf-config: " + path + " is given twice");
    // An error of one config of several names that config: the flag it reports was never typed.
    const std::string under = paths.size() > 1 ? " (under --hf-config " + path + ")" : "";
    try {
      ScalingFlags scaling = flags.scaling;
      FormFlags form = flags.form;
      check::HfTargets targets;  // the census sweeps its own bases and head dims: the scaling and form only
      targets.scaling = &scaling;
      targets.form = &form;
      targets.given = given_parameters(cmd, {"mrope_section", "mrope_layout"});
      targets.command = cmd.get_name();
      if (const auto r = check::apply_hf_config(hf_source(flags.hf, cmd, path), targets, flag_names())) {
        fmt::print("{}", r->block);
        fmt::print(
            "  note: the census sweeps its own bases and head dims; the config gives its scaling and form\n");
      }
      census::Options o = with_flags(base, scaling, form);
      o.config = path;
      check_census_selection(o);
      out.push_back(std::move(o));
    } catch (const check::BadRequest& e) {  // UsageError included
      if (under.empty()) throw;
      throw check::BadRequest(std::string(e.what()) + under, e.parameter());
    }
  }
  return out;
}

void check_census_selection(const census::Options& o) {
  const auto matching = harness::instances_matching(o.glob);
  if (matching.empty()) throw UsageError("--variant: no variant matches '" + o.glob + "'");
  if (std::none_of(matching.begin(), matching.end(), [&](const harness::Instance& in) {
        return harness::traits_of(in.variant->family()).census_applies(o);
      }))
    throw UsageError("--variant: '" + o.glob +
                     "' matches no RoPE instance, and RoPE scaling and forms apply to RoPE only" +
                     (o.config.empty() ? "" : " (under --hf-config " + o.config + ")"));
  try {
    // A LongRoPE list no head dim fits, a partial factor none allows: before any instance is swept.
    for (const harness::FamilyTraits* t : harness::family_traits()) {
      if (t->census_applies(o) &&
          std::any_of(matching.begin(), matching.end(),
                      [&](const harness::Instance& in) { return in.variant->family() == t->family; }))
        t->census_dims(o);
    }
  } catch (const InvalidArgument& e) {
    check::rethrow_named(e, flag_names());
  }
}

}  // namespace pe::cli
