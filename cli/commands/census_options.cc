#include "census_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common.h"
#include "names.h"
#include "pe/check/errors.h"
#include "pe/check/spec.h"
#include "pe/errors.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/plugin.h"
#include "pe/reports/summary.h"
#include "plugin_option.h"
#include "verify.h"

namespace pe::cli {

census::Options with_flags(census::Options o, const ScalingFlags& scaling, const FormFlags& form) {
  o.scaling = to_rope_scaling(scaling.spec);
  if (switches_per_token(o.scaling))
    throw UsageError(
        "--longrope-switch: per-token applies to check and export --reference (a variant rotates with "
        "one list per call)");
  o.form = to_rope_form(form.spec);
  const std::int64_t offset = form.spec.rotary_offset.value_or(0);
  if (offset < 0) throw UsageError("--rotary-offset: must be >= 0, got " + std::to_string(offset));
  o.rotary_offset = offset;
  if (const auto factor = scaling.spec.partial_rotary_factor) {
    if (!(*factor > 0))  // 0 would read as "not given" in census::Options
      throw UsageError(fmt::format("--partial-rotary-factor: must be in (0, 1], got {:g}", *factor));
    o.partial_rotary_factor = *factor;
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
      // The census sweeps its own bases and head dims: the scaling and form only.
      check::RopeSpec spec;
      spec.scaling = scaling.spec;
      spec.form = form.spec;
      const check::HfUse use{false, false, false, false, false, false, {}, cmd.get_name()};
      if (const auto r = check::apply_hf_config(hf_source(flags.hf, cmd, path), spec, use, flag_names())) {
        scaling.spec = spec.scaling;
        form.spec = spec.form;
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

CensusRuns run_per_config(std::vector<census::Options> runs, const std::string& every_row_at) {
  CensusRuns out;
  for (const census::Options& o : runs) {
    if (census::rope_only(o)) {
      RopeParams shown;
      shown.form = o.form;
      shown.rotary_offset = o.rotary_offset;
      const std::string form = check::describe_form(shown);
      fmt::print("{}RoPE instances only, scaling {}{} (the census JSON records its parameters)\n",
                 o.config.empty() ? "" : o.config + ": ", to_string(o.scaling.type),
                 form.empty() ? "" : ", " + form);
    }
    std::vector<census::InstanceResult> results;
    try {
      results = run_census(o);
    } catch (const InvalidArgument& e) {
      check::rethrow_named(e, flag_names());
    }
    out.documents.push_back(census::to_document(results, o));
    if (runs.size() > 1) fmt::print("-- {} --\n", o.config);
    const nlohmann::json& instances = out.documents.back()["instances"];
    constexpr std::size_t kWholeTable = 40;
    std::size_t outside = 0;
    for (const auto& r : results) outside += r.within_contract() ? 0 : 1;
    if (instances.size() <= kWholeTable) {
      fmt::print("{}", reports::census_instance_table(instances));
    } else {
      nlohmann::json failing = nlohmann::json::array();
      for (const auto& i : instances)
        if (!i.value("within_contract", false)) failing.push_back(i);
      if (!failing.empty()) fmt::print("{}", reports::census_instance_table(failing));
      fmt::print("census: {} of {} instances within their contracts{}; every row: {}\n",
                 results.size() - outside, results.size(), failing.empty() ? "" : " (the others above)",
                 every_row_at);
    }
    out.failed += outside;
    out.total += results.size();
  }
  out.options = std::move(runs);
  return out;
}

nlohmann::json sweep_document(const CensusRuns& runs, sweep::Header h,
                              const std::vector<sweep::PropertyVerdict>& properties) {
  const census::Options& first = runs.options.front();
  std::vector<nlohmann::json> documents = runs.documents;
  for (std::size_t k = 0; k < runs.options.size(); ++k) {
    documents[k]["selected"] = census::selection(runs.options[k]).size();
    h.configs.push_back(runs.options[k].config);
  }
  h.variant = first.glob;
  h.effort = first.effort == census::Effort::Full ? "full" : "quick";
  h.max_position = first.max_position;
  h.plugins = plugin_file_names();
  h.shard_index = first.shard_index;
  h.shard_count = first.shard_count;
  return sweep::document(h, documents, properties);
}

}  // namespace pe::cli
