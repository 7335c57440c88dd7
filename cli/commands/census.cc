// pe-suite census: the deterministic accuracy sweep alone, shardable (report merges the shards).
#include "pe/harness/census.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <tuple>

#include "census_options.h"
#include "common.h"
#include "names.h"
#include "pe/errors.h"
#include "pe/harness/exhaustive.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/plugin.h"
#include "pe/harness/sweep.h"
#include "pe/reports/summary.h"
#include "plugin_option.h"
#include "progress.h"
#include "verify.h"

namespace pe::cli {
namespace {

struct CensusArgs : CensusFlags {
  std::string glob = "*", effort = "quick", shard = "0/1", out;
  std::int64_t max_position = 0;
  bool exhaustive = false;  // every position of --positions instead of the sampled grid
  std::string positions = "0:2147483648";
  std::int64_t dim = 128;
  double base = 1e4;
  std::size_t threads = 0;
  std::int64_t checkpoint_every = std::int64_t{1} << 24;  // --exhaustive: positions between checkpoints
  bool resume = false;
  double call_timeout_s = 60;  // an outside kernel's call that does not return within it is a hang
};

// The sampled census: one document, or with --hf-config repeated a sweep's (pe/harness/sweep.h): one
// census per config, their (config, instance) pairs split by --shard.
int census_command(const CensusArgs& a, const CLI::App& cmd) {
  census::Options base;
  base.glob = a.glob;
  base.effort = parse_effort(a.effort);
  if (a.max_position < 0)
    throw UsageError("--max-position: must be >= 0, got " + std::to_string(a.max_position));
  base.max_position = a.max_position;
  if (!(a.call_timeout_s > 0))
    throw UsageError(fmt::format("--call-timeout: must be > 0 seconds, got {:g}", a.call_timeout_s));
  base.call_timeout_s = a.call_timeout_s;
  std::tie(base.shard_index, base.shard_count) = parse_shard(a.shard, "--shard");
  if (harness::instances_matching(a.glob).empty())
    throw UsageError("--variant: no variant matches '" + a.glob + "'");
  const CensusRuns runs = run_per_config(options_per_config(base, a, cmd),  // each selection checked
                                         "pe-suite report --census " + a.out);
  // A sweep: more than one config, or one config's census split into tasks (without a config, --shard splits
  // the census alone, merged by report as census files).
  if (runs.options.size() == 1 && !(cmd.count("--shard") > 0 && !a.hf.paths.empty())) {
    write_text(a.out, runs.documents.front().dump(2) + "\n");
  } else {
    sweep::Header h;
    if (cmd.count("--layer") > 0) h.selection["layer"] = a.hf.layer;
    if (!a.hf.layer_type.empty()) h.selection["layer_type"] = a.hf.layer_type;
    write_text(a.out, sweep_document(runs, h).dump(2) + "\n");
  }
  fmt::print("shard {}: {} of {} {} within their contracts\n", a.shard, runs.total - runs.failed, runs.total,
             runs.options.size() > 1 ? "config x instance pairs" : "instances");
  return runs.failed == 0 ? kOk : kCheckFailed;
}

std::string duration(double seconds) {
  const auto s = static_cast<long long>(seconds);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60)
                   : fmt::format("{}m{:02}s", s / 60, s % 60);
}

// census --exhaustive: every position of the range (this shard's part), every channel.
int exhaustive_command(const CensusArgs& a, const CLI::App& cmd) {
  for (const char* flag : {"--effort", "--max-position", "--hf-config"})
    if (cmd.count(flag) > 0)
      throw UsageError(std::string(flag) + ": applies to the sampled census, not --exhaustive");
  reject_scaling_flags(a.scaling, "--exhaustive sweeps unscaled tables and rotations");
  reject_form_flags(a.form, "--exhaustive sweeps unscaled tables and rotations");
  exhaustive::Options o;
  o.glob = a.glob;
  const auto colon = a.positions.find(':');
  if (colon == std::string::npos) throw UsageError("--positions: expected A:B, got '" + a.positions + "'");
  o.begin = parse_int(a.positions.substr(0, colon), "--positions");
  o.end = parse_int(a.positions.substr(colon + 1), "--positions");
  std::tie(o.shard_index, o.shard_count) = parse_shard(a.shard, "--shard");
  o.dim = a.dim;
  o.base = a.base;
  o.threads = a.threads;
  const auto started = std::chrono::steady_clock::now();
  Progress progress("exhaustive", 1000);
  o.on_progress = [&](std::int64_t done, std::int64_t total) {
    if (total <= 0) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double left =
        done > 0 ? elapsed * static_cast<double>(total - done) / static_cast<double>(done) : 0;
    progress.update(static_cast<std::size_t>(1000.0 * static_cast<double>(done) / static_cast<double>(total)),
                    fmt::format("(per mille) positions {} of {}, {} left", done, total, duration(left)));
  };
  // Checkpoints beside --out, each renamed into place whole; a finished run removes its own.
  if (a.checkpoint_every < 0)
    throw UsageError(fmt::format("--checkpoint-every: must be >= 0 positions, got {}", a.checkpoint_every));
  o.checkpoint_every = a.checkpoint_every;
  const std::string checkpoint = a.out + ".checkpoint";
  const bool found = std::filesystem::exists(checkpoint);
  if (found && !a.resume)
    throw UsageError(fmt::format(
        "--out: a checkpoint of an unfinished run is at {}: --resume continues it (delete it to start over)",
        checkpoint));
  if (found) {
    try {
      o.resume = nlohmann::json::parse(read_text(checkpoint, "--resume"));
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format("--resume: {} is not JSON ({})", checkpoint, e.what()));
    }
    fmt::print("resuming from {}: positions done up to {}\n", checkpoint,
               o.resume.value("checkpoint", nlohmann::json::object()).value("done_until", std::int64_t{-1}));
  } else if (a.resume) {
    fmt::print("--resume: no checkpoint at {}; starting from the beginning\n", checkpoint);
  }
  if (o.checkpoint_every > 0)
    o.on_checkpoint = [&](const nlohmann::json& doc) { write_text(checkpoint, doc.dump(2) + "\n", true); };
  exhaustive::Result r;
  try {
    r = exhaustive::run(o);
  } catch (const InvalidArgument& e) {
    throw UsageError(fmt::format("--{}: {}", e.parameter(), e.what()));
  }
  const nlohmann::json doc = exhaustive::to_json(r);
  fmt::print("{}", reports::exhaustive_table(doc));
  write_text(a.out, doc.dump(2) + "\n");
  std::error_code ec;
  std::filesystem::remove(checkpoint, ec);
  std::size_t failed = 0;
  for (const auto& i : r.instances) failed += i.within_contract() ? 0 : 1;
  fmt::print(
      "shard {}: positions [{}, {}) of [{}, {}): {} of {} instances within their contracts at every one "
      "({:.1f} s)\n",
      a.shard, r.options.begin, r.options.end, r.range_begin, r.range_end, r.instances.size() - failed,
      r.instances.size(), r.seconds);
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
  cmd->add_option(
         "--shard", a->shard,
         "I/N: this task's part: the instances (with --hf-config: config x instance pairs) whose stable "
         "hash of the name is I (disjoint shards; report merges them)")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Census JSON")->required();
  cmd->add_flag("--exhaustive", a->exhaustive,
                "Every position of --positions and every channel (--shard then splits the positions)");
  cmd->add_option("--positions", a->positions, "--exhaustive: the half-open range A:B")
      ->capture_default_str();
  cmd->add_option("--dim", a->dim, "--exhaustive: the table's dim or RoPE's head dim")->capture_default_str();
  cmd->add_option("--base", a->base, "--exhaustive: the frequency base")->capture_default_str();
  cmd->add_option(
         "--call-timeout", a->call_timeout_s,
         "Seconds an outside kernel's call may take before the census calls it hung (its worker killed)")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "--exhaustive: threads (0: every hardware thread)")
      ->capture_default_str();
  cmd->add_option("--checkpoint-every", a->checkpoint_every,
                  "--exhaustive: write the result so far to <out>.checkpoint every N positions (0: never)")
      ->capture_default_str();
  cmd->add_flag("--resume", a->resume,
                "--exhaustive: continue from <out>.checkpoint when there is one (the same options)");
  add_scaling_options(*cmd, a->scaling);
  add_form_options(*cmd, a->form);
  add_hf_config_options(*cmd, a->hf, true);
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([a, cmd, plugins, &exit_code] {
    check_output_paths(*cmd, {"--out"}, {"--hf-config", "--short-factors", "--long-factors"});
    load_plugins(*plugins);
    read_scaling_flags(*cmd, a->scaling);
    read_form_flags(*cmd, a->form);
    if (a->exhaustive) {
      exit_code = exhaustive_command(*a, *cmd);
      return;
    }
    for (const char* flag : {"--positions", "--dim", "--base", "--threads", "--checkpoint-every", "--resume"})
      if (cmd->count(flag) > 0) throw UsageError(std::string(flag) + ": applies to --exhaustive");
    exit_code = census_command(*a, *cmd);
  });
}

}  // namespace pe::cli
