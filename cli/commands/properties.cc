#include "properties.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common.h"

namespace pe::cli {

std::optional<PropertyRun> run_properties(const std::string& glob, std::uint64_t seed, bool full,
                                          const std::string& log_path) {
  const std::optional<std::string> exe = helper_executable("pe_props");
  if (!exe) return std::nullopt;
  PropertyRun run;
  run.rc_params = fmt::format("seed={} max_size=100 max_success={}", seed, full ? 100 : 25);
  std::string json_path = (std::filesystem::temp_directory_path() / "pe-suite-props-XXXXXX").string();
  const int fd = mkstemp(json_path.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the property report");
  close(fd);
  // A selection can leave a suite without instances; the suites allow it (GTEST_ALLOW_UNINSTANTIATED_…).
  const int status =
      spawn_and_wait({*exe, "--gtest_brief=1", std::string("--gtest_output=json:") + json_path},
                     {"PE_VARIANT=" + glob, "RC_PARAMS=" + run.rc_params}, log_path);
  run.log = log_path;
  std::ifstream in(json_path);
  try {
    run.gtest = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    std::filesystem::remove(json_path);
    throw std::runtime_error(fmt::format("the property binary stopped without a report (status {})", status));
  }
  std::filesystem::remove(json_path);
  run.tests = run.gtest.value("tests", 0);
  run.failures = run.gtest.value("failures", 0) + run.gtest.value("errors", 0);
  if (run.failures == 0 && status != 0) run.failures = 1;
  return run;
}

}  // namespace pe::cli
