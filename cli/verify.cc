// pe-suite verify: the census of the selected variants against the exact reference, with a table,
// JSON and Markdown; exit 1 when any instance breaks its contract.
#include "verify.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "census.h"
#include "common.h"
#include "summary.h"

namespace pe::cli {

int verify(const VerifyOptions& o) {
  census::Options options;
  options.glob = o.glob;
  options.max_position = o.max_position;
  if (o.effort == "quick") {
    options.effort = census::Effort::Quick;
  } else if (o.effort == "full") {
    options.effort = census::Effort::Full;
  } else {
    throw UsageError("--effort: expected quick or full, got '" + o.effort + "'");
  }
  if (o.max_position < 0)
    throw UsageError("--max-position: must be >= 0, got " + std::to_string(o.max_position));
  const auto results = census::run(options);
  if (results.empty()) throw UsageError("--variant: no variant matches '" + o.glob + "'");
  const nlohmann::json json = census::to_json(results);
  fmt::print("{}", reports::census_table(json));
  const auto write = [](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    std::ofstream(path) << text;
    fmt::print("wrote {}\n", path);
  };
  write(o.json_out, json.dump(2) + "\n");
  write(o.markdown_out, reports::census_markdown(json));
  std::size_t failed = 0;
  for (const auto& r : results) failed += r.within_contract() ? 0 : 1;
  fmt::print("{} of {} instances within their contracts\n", results.size() - failed, results.size());
  return failed == 0 ? kOk : kCheckFailed;
}

void add_verify(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("verify", "Accuracy census of the selected variants against the exact reference");
  auto o = std::make_shared<VerifyOptions>();
  cmd->add_option("--variant", o->glob, "Variants or instances to check (glob, e.g. 'rope.*')")
      ->capture_default_str();
  cmd->add_option("--effort", o->effort, "quick or full grid")->capture_default_str();
  cmd->add_option("--max-position", o->max_position,
                  "Stop the bands here (0: each contract's largest position)");
  cmd->add_option("--out", o->json_out, "Write the census JSON here");
  cmd->add_option("--markdown", o->markdown_out, "Write the census as Markdown here");
  cmd->callback([o, &exit_code] { exit_code = verify(*o); });
}

}  // namespace pe::cli
