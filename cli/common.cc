#include "common.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pe/check/check.h"
#include "pe/check/npy.h"
#include "pe/plan.h"
#include "pe/reports/bench_results.h"

extern char** environ;

namespace pe::cli {

std::optional<std::string> helper_executable(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  const std::filesystem::path dir = self.parent_path();
  for (const std::filesystem::path& p : {dir / name, dir / ".." / "libexec" / "pe-suite" / name,
                                         dir / ".." / "properties" / name, dir / ".." / "bench" / name}) {
    if (std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0)
      return std::filesystem::weakly_canonical(p, ec).string();
  }
  return std::nullopt;
}

int spawn_and_wait(const std::vector<std::string>& args, const std::vector<std::string>& env,
                   const std::string& stdout_path, const std::function<bool()>& give_up) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& x) {
      return v.substr(0, v.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1);
    });
    if (!replaced) environment.emplace_back(v);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<std::string> a = args;
  std::vector<char*> argv, envp;
  for (std::string& x : a) argv.push_back(x.data());
  for (std::string& x : environment) envp.push_back(x.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stdout_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  std::fflush(stdout);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run " + args[0]);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, give_up ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("lost " + args[0] + ": waitpid failed");
    if (done == 0 && give_up()) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    if (done == 0) usleep(50 * 1000);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string read_text(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    throw UsageError(what + ": cannot read '" + path + "' (" + check::why_unreadable(path) + ")");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  try {
    return reports::parse_benchmark_json(read_text(path, what), fmt::format("{} '{}'", what, path));
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

void write_text(const std::string& path, const std::string& text, bool quiet) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    throw UsageError(fmt::format("cannot write '{}': the folder '{}' does not exist", path, parent.string()));
  // A device or a FIFO (/dev/stdout, /dev/null) is written to as it is: renaming over it would replace it.
  std::error_code special;
  const auto status = std::filesystem::status(path, special);
  if (!special && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    std::ofstream out(path);
    if (!out || !(out << text) || !out.flush()) throw UsageError("cannot write '" + path + "'");
    if (!quiet) fmt::print("wrote {}\n", path);
    return;
  }
  const std::string partial = fmt::format("{}.partial-{}", path, getpid());
  {
    std::ofstream out(partial);
    if (!out || !(out << text) || !out.flush()) {
      std::error_code ec;
      std::filesystem::remove(partial, ec);
      throw UsageError("cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    std::filesystem::remove(partial, ec);
    throw UsageError("cannot write '" + path + "': " + ec.message());
  }
  if (!quiet) fmt::print("wrote {}\n", path);
}

CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const auto first = s.find_first_not_of(" \t");
        if (first != std::string::npos && s[first] == '-')
          return "expected an integer in [0, 2^64), got " + s;
        return "";
      },
      "");
}

void check_output_paths(const CLI::App& cmd, std::initializer_list<const char*> outputs,
                        std::initializer_list<const char*> inputs,
                        std::initializer_list<const char*> suffixes) {
  const auto value = [&cmd](const char* flag) -> std::string {
    const CLI::Option* o = cmd.get_option_no_throw(flag);
    return o != nullptr && o->count() > 0 ? o->as<std::string>() : std::string();
  };
  for (const char* out : outputs) {
    const std::string path = value(out);
    if (path.empty()) continue;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent))
      throw UsageError(fmt::format("{}: the folder '{}' does not exist (for '{}'); create it first", out,
                                   parent.string(), path));
    std::vector<std::string> written = {path};
    for (const char* s : suffixes) written.push_back(path + s);
    for (const char* in : inputs) {
      const CLI::Option* o = cmd.get_option_no_throw(in);
      if (o == nullptr) continue;
      for (const std::string& source : o->results()) {  // every value of a repeated input
        std::error_code ec;
        for (const std::string& w : written) {
          if (!source.empty() && std::filesystem::equivalent(w, source, ec))
            throw UsageError(fmt::format("{}: '{}' is this command's {} ({}); refusing to overwrite it", out,
                                         w, in, source));
        }
      }
    }
  }
}

std::vector<std::int64_t> positions_from(const std::string& range, const std::string& file) {
  if (range.empty() == file.empty()) {
    throw UsageError("--positions or --positions-file: give exactly one");
  }
  std::vector<std::int64_t> out;
  if (!range.empty()) {
    const auto [a, b] = parse_range(range, "--positions");
    for (std::int64_t p = a; p < b; ++p) out.push_back(p);
    return out;
  }
  if (file.ends_with(".npy")) {
    const check::NpyArray a = check::read_npy(file);
    for (double v : a.values) {
      if (!(v >= 0 && v <= static_cast<double>(kMaxPosition)) || v != std::floor(v)) {
        throw UsageError(fmt::format("--positions-file: {} holds {}, not a position in [0, 2^53]", file, v));
      }
      out.push_back(static_cast<std::int64_t>(v));
    }
    if (out.empty()) throw UsageError("--positions-file: no positions in '" + file + "'");
    return out;
  }
  std::ifstream in(file);
  if (!in || std::filesystem::is_directory(file))
    throw UsageError("--positions-file: cannot read '" + file + "' (" + check::why_unreadable(file) + ")");
  std::string word;
  while (in >> word) out.push_back(parse_int(word, "--positions-file " + file));
  if (out.empty()) throw UsageError("--positions-file: no positions in '" + file + "'");
  return out;
}

std::size_t output_values(std::initializer_list<std::pair<const char*, std::size_t>> dims,
                          std::size_t bytes_per_value) {
  std::string named;
  std::size_t values = 1;
  bool overflow = false;
  for (const auto& [name, n] : dims) {
    named += fmt::format("{}{} {}", named.empty() ? "" : " x ", name, n);
    overflow = overflow || __builtin_mul_overflow(values, n, &values);
  }
  std::size_t bytes = 0;
  overflow = overflow || __builtin_mul_overflow(values, bytes_per_value, &bytes);
  const auto memory =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (overflow) throw UsageError(fmt::format("{}: the output's size overflows", named));
  if (static_cast<double>(bytes) > memory) {
    throw UsageError(
        fmt::format("{} = {} values ({:.3g} GB to build): more than this machine's {:.3g} GB of memory",
                    named, values, static_cast<double>(bytes) / 1e9, memory / 1e9));
  }
  return values;
}

}  // namespace pe::cli
