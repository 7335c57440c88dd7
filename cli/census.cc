// pe-suite census: the deterministic accuracy sweep alone, shardable (report merges the shards).
#include "pe/harness/census.h"

#include <fmt/format.h>

#include <memory>
#include <tuple>

#include "common.h"
#include "form_options.h"
#include "hf_config_options.h"
#include "pe/errors.h"
#include "pe/harness/family_traits.h"
#include "pe/reports/summary.h"
#include "plugin_option.h"
#include "progress.h"
#include "scaling_options.h"
#include "verify.h"

namespace pe::cli {
namespace {

struct CensusArgs {
  std::string glob = "*", effort = "quick", shard = "0/1", out;
  std::int64_t max_position = 0;
  ScalingFlags scaling;
  FormFlags form;
  HfConfigFlags hf;
};

int census_command(const CensusArgs& a) {
  census::Options o;
  o.glob = a.glob;
  o.effort = parse_effort(a.effort);
  if (a.max_position < 0)
    throw UsageError("--max-position: must be >= 0, got " + std::to_string(a.max_position));
  o.max_position = a.max_position;
  std::tie(o.shard_index, o.shard_count) = parse_shard(a.shard, "--shard");
  const auto matching = harness::instances_matching(a.glob);
  if (matching.empty()) throw UsageError("--variant: no variant matches '" + a.glob + "'");
  o.scaling = to_rope_scaling(a.scaling);
  o.form = to_rope_form(a.form);
  if (a.form.rotary_offset < 0)
    throw UsageError("--rotary-offset: must be >= 0, got " + std::to_string(a.form.rotary_offset));
  o.rotary_offset = a.form.rotary_offset;
  if (a.scaling.given.count("--partial-rotary-factor") > 0) {
    if (!(a.scaling.partial_rotary_factor > 0))  // 0 would read as "not given" in census::Options
      throw UsageError(fmt::format("--partial-rotary-factor: must be in (0, 1], got {:g}",
                                   a.scaling.partial_rotary_factor));
    o.partial_rotary_factor = a.scaling.partial_rotary_factor;
  }
  if (std::none_of(matching.begin(), matching.end(), [&](const harness::Instance& in) {
        return harness::traits_of(in.variant->family()).census_applies(o);
      }))
    throw UsageError("--variant: '" + a.glob +
                     "' matches no RoPE instance, and RoPE scaling and forms apply to RoPE only");
  std::vector<census::InstanceResult> results;
  try {
    // A LongRoPE list no head dim fits, a partial factor none allows: before any instance is swept.
    for (const harness::FamilyTraits* t : harness::family_traits()) {
      if (t->census_applies(o) &&
          std::any_of(matching.begin(), matching.end(),
                      [&](const harness::Instance& in) { return in.variant->family() == t->family; }))
        t->census_dims(o);
    }
    if (census::rope_only(o)) {
      RopeParams shown;
      shown.form = o.form;
      shown.rotary_offset = o.rotary_offset;
      const std::string form = describe_form(shown);
      fmt::print("RoPE instances only, scaling {}{} (the census JSON records its parameters)\n",
                 to_string(o.scaling.type), form.empty() ? "" : ", " + form);
    }
    results = run_census(o);
  } catch (const InvalidArgument& e) {
    rethrow_with_flag(e);
  }
  const nlohmann::json doc = census::to_document(results, o);
  fmt::print("{}", reports::census_instance_table(doc["instances"]));
  write_text(a.out, doc.dump(2) + "\n");
  std::size_t failed = 0;
  for (const auto& r : results) failed += r.within_contract() ? 0 : 1;
  fmt::print("shard {}: {} of {} instances within their contracts\n", a.shard, results.size() - failed,
             results.size());
  return failed == 0 ? kOk : kCheckFailed;
}

}  // namespace

void add_census(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("census", "Deterministic accuracy sweep against the exact reference (shardable)");
  auto a = std::make_shared<CensusArgs>();
  cmd->add_option("--variant", a->glob, "Variants or instances (glob)")->capture_default_str();
  cmd->add_option("--effort", a->effort, "quick or full grid")->capture_default_str();
  cmd->add_option("--max-position", a->max_position, "Stop the bands here (0: each contract's largest)");
  cmd->add_option("--shard", a->shard, "I/N: every N-th instance from the I-th (disjoint shards)")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Census JSON")->required();
  add_scaling_options(*cmd, a->scaling);
  add_form_options(*cmd, a->form);
  add_hf_config_options(*cmd, a->hf);
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([a, cmd, plugins, &exit_code] {
    load_plugins(*plugins);
    a->scaling.given = given_scaling_flags(*cmd);
    HfTargets targets;  // the census sweeps its own bases and head dims: the scaling and the form only
    targets.scaling = &a->scaling;
    targets.form = &a->form;
    if (apply_hf_config(a->hf, *cmd, targets))
      fmt::print(
          "  note: census sweeps its own bases and head dims; the config gives its scaling and form\n");
    exit_code = census_command(*a);
  });
}

}  // namespace pe::cli
