#include "properties.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "common.h"
#include "pe/harness/instance.h"
#include "pe/harness/plugin.h"
#include "pe/variant.h"
#include "property_parts.h"

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

std::string temporary_file(const char* pattern) {
  std::string path = (std::filesystem::temp_directory_path() / pattern).string();
  const int fd = mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the property report");
  close(fd);
  return path;
}

// Temporary files that go, however the function holding them returns.
struct Remove {
  std::vector<std::string> paths;
  ~Remove() {
    std::error_code ec;
    for (const std::string& p : paths) std::filesystem::remove(p, ec);
  }
};

// What one pe_props process (and its reruns after a crash) reported.
struct PartRun {
  nlohmann::json gtest;
  std::vector<std::string> crashed;
  int status = 0;
  std::vector<std::string> logs;  // the first run's output, then each rerun's
};

// The arguments that select a run's tests, given the crashed ones to leave out ("A:B", or empty).
using Selection = std::function<std::vector<std::string>(const std::string& excluded)>;

// The tests `select` names, run by `exe` with `env`, output to `log_path` (a rerun's to log_path.N).
PartRun run_part(const std::string& exe, const std::vector<std::string>& env, const Selection& select,
                 const std::string& log_path, double test_timeout_s) {
  PartRun run;
  const std::string json_path = temporary_file("pe-suite-props-XXXXXX"),
                    last_path = temporary_file("pe-suite-last-XXXXXX"),
                    case_path = temporary_file("pe-suite-case-XXXXXX");
  const Remove remove{{json_path, last_path, case_path}};
  // A binary that dies (an outside kernel's crash) leaves no report: the test it was in is named from
  // $PE_LAST_TEST, and the run is repeated without it until one completes.
  std::string excluded;
  for (;;) {
    std::vector<std::string> args = {exe, "--gtest_brief=1", std::string("--gtest_output=json:") + json_path};
    for (std::string& a : select(excluded)) args.push_back(std::move(a));
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
    std::vector<std::string> environment = env;
    environment.insert(environment.end(), {"PE_LAST_TEST=" + last_path, "PE_LAST_CASE=" + case_path});
    run.logs.push_back(log_path + (run.crashed.empty() ? "" : fmt::format(".{}", run.crashed.size())));
    run.status = spawn_and_wait(args, environment, run.logs.back(), give_up);
    std::ifstream in(json_path);
    try {
      run.gtest = nlohmann::json::parse(in);
      return run;
    } catch (const nlohmann::json::exception&) {
    }
    std::string test, instance;
    {
      std::ifstream last(last_path);
      std::getline(last >> std::ws, test);
      std::getline(last, instance);
    }
    const std::string how =
        hung ? fmt::format("hung: no result within {:g} s (the binary was killed)", test_timeout_s)
        : run.status > 128 ? fmt::format("signal {} ({})", run.status - 128, strsignal(run.status - 128))
                           : fmt::format("exit status {}", run.status);
    if (test.empty() || run.crashed.size() >= 64) {
      throw std::runtime_error(fmt::format("the property binary stopped without a report ({}){}", how,
                                           test.empty() ? "" : " in test " + test));
    }
    run.crashed.push_back(fmt::format("{}: {}{}{}", test, how, kernel_words(instance), last_case(case_path)));
    excluded += (excluded.empty() ? "" : ":") + test;
  }
}

// GoogleTest's filter: positive patterns, then one '-' and the negative ones (the user's own, if any).
Selection filter_selection(const std::string& filter) {
  return [filter](const std::string& excluded) -> std::vector<std::string> {
    if (filter.empty() && excluded.empty()) return {};
    const std::string positive = filter.empty() ? std::string("*") : filter;
    const char* join = positive.find('-') == std::string::npos ? "-" : ":";
    return {"--gtest_filter=" + positive + (excluded.empty() ? "" : join + excluded)};
  };
}

// A part's tests by name, less the crashed ones, in a flag file: thousands of names exceed what one
// argument may hold.
Selection names_selection(const std::vector<std::string>& tests, const std::string& flag_file) {
  return [tests, flag_file](const std::string& excluded) -> std::vector<std::string> {
    std::set<std::string> crashed;
    std::istringstream in(excluded);
    for (std::string t; std::getline(in, t, ':');) crashed.insert(t);
    std::string names;
    for (const std::string& t : tests) {
      if (!crashed.contains(t)) names += (names.empty() ? "" : ":") + t;
    }
    // Every test of the part crashed: a filter that matches none.
    std::ofstream(flag_file) << "--gtest_filter=" << (names.empty() ? "-*" : names) << "\n";
    return {"--gtest_flagfile=" + flag_file};
  };
}

// The selected tests' names in GoogleTest's order (pe_props --gtest_list_tests under the same selection).
std::vector<std::string> list_tests(const std::string& exe, const std::vector<std::string>& env,
                                    const std::string& filter) {
  const std::string listing = temporary_file("pe-suite-list-XXXXXX");
  const Remove remove{{listing}};
  std::vector<std::string> args = {exe, "--gtest_list_tests"};
  for (std::string& a : filter_selection(filter)("")) args.push_back(std::move(a));
  if (spawn_and_wait(args, env, listing) != 0) return {};
  return listed_tests(read_text(listing, "the property list"));
}

// Appends `from`'s text to `to` and removes it.
void move_log(const std::string& from, std::ofstream& to) {
  {
    std::ifstream in(from, std::ios::binary);
    to << in.rdbuf();
  }
  std::error_code ec;
  std::filesystem::remove(from, ec);
}

struct Parts {
  std::vector<PartRun> runs;
  nlohmann::json report;             // theirs merged: one run's (property_parts.h)
  std::vector<std::string> crashed;  // theirs in the order one run meets them
};

// The tests dealt to one process per core, run side by side (the properties time nothing), their reports
// merged and their logs joined into `log_path` in the parts' order. Empty: too few tests to split.
std::optional<Parts> run_parts(const std::string& exe, const std::vector<std::string>& env,
                               const std::string& filter, const std::string& log_path,
                               double test_timeout_s) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::string> tests =
      cores > 1 ? list_tests(exe, env, filter) : std::vector<std::string>{};
  const std::vector<std::vector<std::string>> dealt = deal_tests(tests, cores);
  if (dealt.size() < 2) return std::nullopt;
  std::vector<PartRun> parts(dealt.size());
  std::vector<std::exception_ptr> errors(dealt.size());
  std::vector<std::string> flag_files;
  for (std::size_t k = 0; k < dealt.size(); ++k)
    flag_files.push_back(temporary_file("pe-suite-filter-XXXXXX"));
  const Remove remove{flag_files};
  {
    std::vector<std::jthread> workers;
    for (std::size_t k = 0; k < dealt.size(); ++k) {
      workers.emplace_back([&, k] {
        try {
          parts[k] = run_part(exe, env, names_selection(dealt[k], flag_files[k]),
                              fmt::format("{}.part{}", log_path, k), test_timeout_s);
        } catch (...) {
          errors[k] = std::current_exception();
        }
      });
    }
  }
  std::ofstream log(log_path, std::ios::binary | std::ios::trunc);
  for (const PartRun& p : parts) {
    for (const std::string& l : p.logs) move_log(l, log);
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::vector<nlohmann::json> reports;
  std::vector<std::string> crashed;
  for (const PartRun& p : parts) {
    reports.push_back(p.gtest);
    crashed.insert(crashed.end(), p.crashed.begin(), p.crashed.end());
  }
  std::map<std::string, std::size_t> rank;  // "Suite.Test: how ..." by its test's place in the list
  for (std::size_t k = 0; k < tests.size(); ++k) rank[tests[k]] = k;
  const auto place = [&](const std::string& c) {
    const auto it = rank.find(c.substr(0, c.find(": ")));
    return it == rank.end() ? tests.size() : it->second;
  };
  std::stable_sort(crashed.begin(), crashed.end(),
                   [&](const std::string& a, const std::string& b) { return place(a) < place(b); });
  return Parts{std::move(parts), merge_reports(reports, tests), std::move(crashed)};
}

}  // namespace

std::optional<PropertyRun> run_properties(const std::string& glob, std::uint64_t seed, bool full,
                                          const std::string& log_path, const std::string& filter,
                                          double test_timeout_s, const std::string& shard) {
  const std::optional<std::string> exe = helper_executable("pe_props");
  if (!exe) return std::nullopt;
  PropertyRun run;
  run.rc_params = fmt::format("seed={} max_size=100 max_success={}", seed, full ? 100 : 25);
  run.log = log_path;
  const std::vector<std::string> env = {"PE_VARIANT=" + glob, "RC_PARAMS=" + run.rc_params,
                                        "PE_SHARD=" + shard};
  std::optional<Parts> parts = run_parts(*exe, env, filter, log_path, test_timeout_s);
  if (!parts) {
    PartRun one = run_part(*exe, env, filter_selection(filter), log_path, test_timeout_s);
    const nlohmann::json report = one.gtest;
    const std::vector<std::string> crashed = one.crashed;
    parts = Parts{{std::move(one)}, report, crashed};
  }
  run.gtest = std::move(parts->report);
  run.crashed = std::move(parts->crashed);
  // A part whose binary failed with nothing else failed (a sanitizer's report at exit) counts once.
  for (const PartRun& p : parts->runs) {
    const int failed =
        p.gtest.value("failures", 0) + p.gtest.value("errors", 0) + static_cast<int>(p.crashed.size());
    run.failures += failed + (failed == 0 && p.status != 0 ? 1 : 0);
  }
  run.tests = run.gtest.value("tests", 0) + static_cast<int>(run.crashed.size());
  return run;
}

}  // namespace pe::cli
