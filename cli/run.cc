// pe-suite run: the main job. Lists the registry, verifies every variant against its contract, and
// leaves the census (JSON + Markdown) in the output folder.
#include <fmt/format.h>

#include "common.h"
#include "verify.h"

namespace pe::cli {

void add_run(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "The main job: list, verify every variant, write the report");
  auto dir = std::make_shared<std::string>("reports/out/latest");
  auto effort = std::make_shared<std::string>("quick");
  cmd->add_option("--out-dir", *dir, "Where the report goes")->capture_default_str();
  cmd->add_option("--effort", *effort, "quick or full census")->capture_default_str();
  cmd->callback([dir, effort, &exit_code] {
    fmt::print("== registered variants ==\n");
    print_list(false);
    fmt::print("\n== census against the exact reference ({}) ==\n", *effort);
    VerifyOptions o;
    o.effort = *effort;
    o.json_out = *dir + "/census.json";
    o.markdown_out = *dir + "/census.md";
    exit_code = verify(o);
    fmt::print("\nreport: {}/census.md\n", *dir);
  });
}

}  // namespace pe::cli
