#include "properties.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common.h"
#include "pe/harness/instance.h"
#include "pe/harness/plugin.h"
#include "pe/variant.h"

namespace pe::cli {

namespace {

// " in plugin /abs/libmine.so kernel rope.mine" for an outside kernel's instance, else "".
std::string kernel_words(const std::string& instance) {
  if (instance.empty()) return "";
  for (const harness::Instance& in : harness::instances_matching(instance)) {
    if (in.name() == instance && !is_builtin(*in.variant))
      return " in " + harness::kernel_origin_words(*in.variant) + in.variant->name();
  }
  return "";
}

// "; last case started: rope.halfsplit.mine/f32 (f32), forward; head_dim 64, ...; 2 tokens x 1 head, ..."
// from $PE_LAST_CASE (properties/support/case_report.cc), "" when the test made no RoPE call.
std::string last_case(const std::string& path) {
  std::ifstream in(path);
  std::string line, out;
  while (std::getline(in, line)) {
    const std::size_t text = line.find_first_not_of(' ');
    if (text != std::string::npos) out += (out.empty() ? "" : "; ") + line.substr(text);
  }
  return out.empty() ? "" : "; last case started: " + out;
}

}  // namespace

std::optional<PropertyRun> run_properties(const std::string& glob, std::uint64_t seed, bool full,
                                          const std::string& log_path, const std::string& filter,
                                          double test_timeout_s, const std::string& shard) {
  const std::optional<std::string> exe = helper_executable("pe_props");
  if (!exe) return std::nullopt;
  PropertyRun run;
  run.rc_params = fmt::format("seed={} max_size=100 max_success={}", seed, full ? 100 : 25);
  const auto temporary = [](const char* pattern) {
    std::string path = (std::filesystem::temp_directory_path() / pattern).string();
    const int fd = mkstemp(path.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file for the property report");
    close(fd);
    return path;
  };
  const std::string json_path = temporary("pe-suite-props-XXXXXX"),
                    last_path = temporary("pe-suite-last-XXXXXX"),
                    case_path = temporary("pe-suite-case-XXXXXX");
  run.log = log_path;
  struct Remove {  // the temporary files go, however this returns
    std::vector<std::string> paths;
    ~Remove() {
      std::error_code ec;
      for (const std::string& p : paths) std::filesystem::remove(p, ec);
    }
  } const remove{{json_path, last_path, case_path}};
  // A binary that dies (an outside kernel's crash) leaves no report: the test it was in is named from
  // $PE_LAST_TEST, and the run is repeated without it until one completes.
  std::string excluded;
  int status = 0;
  for (;;) {
    std::vector<std::string> args = {*exe, "--gtest_brief=1",
                                     std::string("--gtest_output=json:") + json_path};
    // GoogleTest's filter: positive patterns, then one '-' and the negative ones (the user's own, if any).
    if (!filter.empty() || !excluded.empty()) {
      const std::string positive = filter.empty() ? std::string("*") : filter;
      const char* join = positive.find('-') == std::string::npos ? "-" : ":";
      args.push_back("--gtest_filter=" + positive + (excluded.empty() ? "" : join + excluded));
    }
    // A selection can leave a suite without instances; the suites allow it (GTEST_ALLOW_UNINSTANTIATED_…).
    // $PE_LAST_TEST holds the running test's name, $PE_LAST_CASE its last RoPE call: a test in which
    // neither moves for test_timeout_s is hung.
    std::string running;
    auto since = std::chrono::steady_clock::now();
    bool hung = false;
    const auto give_up = [&] {
      std::string now;
      std::getline(std::ifstream(last_path) >> std::ws, now);
      std::error_code ec;
      const auto stamp = std::filesystem::last_write_time(case_path, ec);
      now += "\n" + std::to_string(ec ? 0 : stamp.time_since_epoch().count());
      if (now != running) {
        running = now;
        since = std::chrono::steady_clock::now();
      }
      hung = !running.starts_with("\n") &&
             std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count() > test_timeout_s;
      return hung;
    };
    status = spawn_and_wait(args,
                            {"PE_VARIANT=" + glob, "RC_PARAMS=" + run.rc_params, "PE_LAST_TEST=" + last_path,
                             "PE_LAST_CASE=" + case_path, "PE_SHARD=" + shard},
                            log_path + (run.crashed.empty() ? "" : fmt::format(".{}", run.crashed.size())),
                            give_up);
    std::ifstream in(json_path);
    try {
      run.gtest = nlohmann::json::parse(in);
      break;
    } catch (const nlohmann::json::exception&) {
    }
    std::string test, instance;
    {
      std::ifstream last(last_path);
      std::getline(last >> std::ws, test);
      std::getline(last, instance);
    }
    const std::string how =
        hung           ? fmt::format("hung: no result within {:g} s (the binary was killed)", test_timeout_s)
        : status > 128 ? fmt::format("signal {} ({})", status - 128, strsignal(status - 128))
                       : fmt::format("exit status {}", status);
    if (test.empty() || run.crashed.size() >= 64) {
      throw std::runtime_error(fmt::format("the property binary stopped without a report ({}){}", how,
                                           test.empty() ? "" : " in test " + test));
    }
    run.crashed.push_back(fmt::format("{}: {}{}{}", test, how, kernel_words(instance), last_case(case_path)));
    excluded += (excluded.empty() ? "" : ":") + test;
  }
  run.tests = run.gtest.value("tests", 0) + static_cast<int>(run.crashed.size());
  run.failures =
      run.gtest.value("failures", 0) + run.gtest.value("errors", 0) + static_cast<int>(run.crashed.size());
  if (run.failures == 0 && status != 0) run.failures = 1;
  return run;
}

}  // namespace pe::cli
