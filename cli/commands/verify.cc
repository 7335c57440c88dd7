// pe-suite verify: the property suite and the census of the selected variants; a table, JSON,
// Markdown and JUnit XML; exit 1 when a property fails or an instance breaks its contract.
#include "verify.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "census_options.h"
#include "common.h"
#include "junit.h"
#include "names.h"
#include "pe/check/spec.h"
#include "pe/errors.h"
#include "pe/harness/plugin.h"
#include "pe/harness/sweep.h"
#include "pe/reports/summary.h"
#include "plugin_option.h"
#include "progress.h"
#include "property_failures.h"

namespace pe::cli {

census::Effort parse_effort(const std::string& effort) {
  if (effort == "quick") return census::Effort::Quick;
  if (effort == "full") return census::Effort::Full;
  throw UsageError("--effort: expected quick or full, got '" + effort + "'");
}

std::vector<census::InstanceResult> run_census(census::Options options) {
  std::unique_ptr<Progress> bar;
  options.on_instance = [&](std::size_t done, std::size_t total, const std::string& name) {
    if (!bar) bar = std::make_unique<Progress>("census", total);
    bar->update(done, name);
  };
  return census::run(options);
}

namespace {

// The property log: beside the run's first output (--out, --markdown, --junit) as <it>.properties.log, else
// in a fresh folder of $TMPDIR: never one shared path that another run overwrites.
std::string property_log_path(const VerifyOptions& o) {
  if (!o.properties_log.empty()) return o.properties_log;
  for (const std::string* out : {&o.json_out, &o.markdown_out, &o.junit_out}) {
    if (!out->empty()) return *out + ".properties.log";
  }
  std::string dir = (std::filesystem::temp_directory_path() / "pe-suite-verify-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr)
    throw std::runtime_error("cannot create a folder for the property log in " +
                             std::filesystem::temp_directory_path().string());
  return dir + "/properties.log";
}

// A sweep's census documents as one instance list for JUnit: each instance named under its config.
nlohmann::json junit_instances(const std::vector<nlohmann::json>& documents) {
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& d : documents) {
    for (nlohmann::json i : d["instances"]) {
      if (d.contains("config"))
        i["instance"] = d["config"].get<std::string>() + ": " + i["instance"].get<std::string>();
      out.push_back(std::move(i));
    }
  }
  return out;
}

}  // namespace

VerifyResult verify(const VerifyOptions& o) {
  census::Options base;
  base.glob = o.glob;
  base.max_position = o.max_position;
  base.effort = parse_effort(o.effort);
  if (!(o.call_timeout_s > 0))
    throw UsageError(fmt::format("--call-timeout: must be > 0 seconds, got {:g}", o.call_timeout_s));
  if (!(o.property_timeout_s > 0))
    throw UsageError(fmt::format("--property-timeout: must be > 0 seconds, got {:g}", o.property_timeout_s));
  base.call_timeout_s = o.call_timeout_s;
  if (o.max_position < 0)
    throw UsageError("--max-position: must be >= 0, got " + std::to_string(o.max_position));
  if (harness::instances_matching(o.glob).empty())
    throw UsageError("--variant: no variant matches '" + o.glob + "'");
  if (!o.shard.empty()) std::tie(base.shard_index, base.shard_count) = parse_shard(o.shard, "--shard");
  std::vector<census::Options> configs;
  if (o.per_config) {
    configs = o.per_config(base);  // each one's selection checked
  } else {
    check_census_selection(base);
    configs = {base};
  }
  const bool sweep = !o.shard.empty() || configs.size() > 1;

  VerifyResult result;
  if (o.properties) {
    fmt::print("== properties ({} effort{}) ==\n", o.effort, o.shard.empty() ? "" : ", shard " + o.shard);
    const std::string log = property_log_path(o);
    result.properties =
        run_properties(o.glob, o.seed, base.effort == census::Effort::Full, log, o.property_filter,
                       std::min(10 * o.call_timeout_s, o.property_timeout_s), o.shard);
    if (result.properties) {
      const PropertyRun& p = *result.properties;
      std::string rerun = "pe-suite verify";
      for (const std::string& plugin : harness::loaded_plugins()) rerun += " --plugin " + plugin;
      rerun += fmt::format(" --seed {}", o.seed);
      if (o.effort != "quick") rerun += " --effort " + o.effort;
      fmt::print("{} of {} property tests passed (RC_PARAMS=\"{}\"; rerun: {} --variant '{}'{}{})\n",
                 p.tests - p.failures, p.tests, p.rc_params, rerun, o.glob,
                 o.shard.empty() ? "" : " --shard " + o.shard,
                 o.property_filter.empty() ? "" : " --property '" + o.property_filter + "'");
      fmt::print("{}", failed_properties(p.gtest, rerun, o.glob, p.log));
      for (const std::string& c : p.crashed) {
        if (c.find(": hung: ") != std::string::npos)
          fmt::print("  HUNG {} (the other properties ran without it)\n", c);
        else
          fmt::print("  CRASHED {} (the binary died there; the other properties ran without it)\n", c);
      }
      fmt::print(
          "property log (RapidCheck's counterexamples and reproduce strings, GoogleTest's own text): {}\n",
          p.log);
    } else {
      fmt::print("this build has no property binary (configure with PE_BUILD_TESTS=ON); census only\n");
    }
  }

  fmt::print("\n== census against the exact reference ({} effort) ==\n", o.effort);
  const std::string every_row_at = !o.census_table_at.empty() ? o.census_table_at
                                   : !o.markdown_out.empty()  ? o.markdown_out
                                   : !o.json_out.empty()      ? "pe-suite report --census " + o.json_out
                                                              : "give --markdown F.md (or --out F.json)";
  const CensusRuns runs = run_per_config(std::move(configs), every_row_at);
  if (sweep) {
    sweep::Header h;
    h.properties = result.properties.has_value();
    h.seed = o.seed;
    h.selection = o.selection;
    if (!o.property_filter.empty()) h.selection["property"] = o.property_filter;
    result.census = sweep_document(
        runs, h,
        result.properties ? property_verdicts(*result.properties) : std::vector<sweep::PropertyVerdict>{});
  } else {
    result.census = runs.documents.front();
  }
  if (!o.json_out.empty()) write_text(o.json_out, result.census.dump(2) + "\n");
  if (!o.markdown_out.empty())
    write_text(o.markdown_out, sweep ? sweep::markdown(result.census)
                                     : reports::census_markdown(runs.documents.front()["instances"]));
  if (!o.junit_out.empty()) {
    write_text(o.junit_out, junit_xml(result.properties ? result.properties->gtest : nlohmann::json(),
                                      junit_instances(runs.documents),
                                      result.properties ? result.properties->rc_params : ""));
  }
  fmt::print("{}{} of {} {} within their contracts\n", o.shard.empty() ? "" : "shard " + o.shard + ": ",
             runs.total - runs.failed, runs.total,
             runs.options.size() > 1 ? "config x instance pairs" : "instances");
  const bool props_failed = result.properties && result.properties->failures > 0;
  result.exit_code = runs.failed == 0 && !props_failed ? kOk : kCheckFailed;
  return result;
}

void add_verify(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("verify", "Property suite and accuracy census of the selected variants");
  auto o = std::make_shared<VerifyOptions>();
  cmd->add_option("--variant", o->glob, "Variants or instances to check (glob, e.g. 'rope.*')")
      ->capture_default_str();
  cmd->add_option("--effort", o->effort, "quick or full (properties: 25 or 100 cases; census grid)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "RapidCheck seed")->capture_default_str()->check(non_negative_integer());
  cmd->add_option("--max-position", o->max_position,
                  "Stop the census bands here (0: each contract's largest)");
  cmd->add_flag("!--no-properties", o->properties, "Census only");
  cmd->add_option(
         "--call-timeout", o->call_timeout_s,
         "Seconds an outside kernel's call may take before the census calls it hung (its worker killed); a "
         "property test making no progress for 10 times this (at most --property-timeout) is hung too")
      ->capture_default_str();
  cmd->add_option("--property-timeout", o->property_timeout_s,
                  "Seconds a property test may make no progress (no new test, no new RoPE call) before it is "
                  "hung: the property binary is killed, the test named, the rest run without it")
      ->capture_default_str();
  cmd->add_option(
      "--out", o->json_out,
      "Write the census JSON here (a sweep's document, pe-suite/sweep/1, with --shard or more than "
      "one --hf-config)");
  cmd->add_option("--markdown", o->markdown_out, "Write the census as Markdown here");
  cmd->add_option("--junit", o->junit_out, "Write JUnit XML (properties and census) here");
  cmd->add_option("--properties-log", o->properties_log,
                  "Where the property binary's output goes (default: beside --out, --markdown or --junit as "
                  "<it>.properties.log, else a fresh folder in $TMPDIR)");
  cmd->add_option("--property", o->property_filter,
                  "Only the property tests matching this GoogleTest filter (e.g. '*RopeProps.Inverse*'), as "
                  "a failure's rerun line gives it");
  cmd->add_option("--shard", o->shard,
                  "I/N: this array task's part of a sweep: the instances (their property tests) and the "
                  "config x instance pairs of the census whose stable hash is I (report merges the tasks' "
                  "--out files)");
  auto configs = std::make_shared<CensusFlags>();
  add_hf_config_options(*cmd, configs->hf, true);
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([o, cmd, configs, plugins, &exit_code] {
    check_output_paths(*cmd, {"--out", "--markdown", "--junit", "--properties-log"}, {"--hf-config"});
    load_plugins(*plugins);
    o->per_config = [configs, cmd](const census::Options& base) {
      return options_per_config(base, *configs, *cmd);
    };
    exit_code = verify(*o).exit_code;
  });
}

}  // namespace pe::cli
