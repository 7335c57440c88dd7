#include "support/case_report.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "pe/harness/run.h"
#include "support/case_probe.h"
#include "support/generators.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

thread_local std::optional<RopeCall> t_last;    // the running case's last call
thread_local std::optional<RopeCall> t_failed;  // the last failing case's: after shrinking, the minimal one

// Up to 16 values whole, else the first and last eight ({} prints doubles shortest, as {:g} would not).
template <class T>
std::string shown(std::span<const T> v) {
  if (v.size() <= 16) return fmt::format("[{}]", fmt::join(v, ", "));
  return fmt::format("[{}, ..., {}] ({} values)", fmt::join(v.first(8), ", "), fmt::join(v.last(8), ", "),
                     v.size());
}

std::string scaling_words(const RopeScaling& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string diagnosis(const RopeCall& c) {
  if (c.positions.empty()) return "diagnosis: undetermined (the call had no tokens)\n";
  try {
    return probe_diagnosis(c);
  } catch (const std::exception& e) {
    return fmt::format("diagnosis: undetermined ({})\n", e.what());
  }
}

// The call without its inputs: the instance, the configuration, the shape and the positions.
std::string case_head(const RopeCall& c) {
  const RopeParams& p = c.params;
  const std::size_t axes = n_axes(p.form), tokens = c.positions.size() / axes;
  std::string s = fmt::format("{} ({}), {}\n", c.instance.name(), to_string(c.instance.dtype),
                              c.direction == RopeDirection::Forward ? "forward" : "inverse");
  s += fmt::format(
      "  head_dim {}, rotary_dim {}, rotary_offset {}, layout {}, base {:g}, scaling {}, form {}\n",
      p.head_dim, p.rotary_dim, p.rotary_offset, to_string(p.layout), p.base, scaling_words(p.scaling),
      form_class(p));
  s += fmt::format("  {} token{} x {} head{}, positions{} {}\n", tokens, tokens == 1 ? "" : "s", c.heads,
                   c.heads == 1 ? "" : "s", axes > 1 ? " [axes][tokens]" : "",
                   shown(std::span<const std::int64_t>(c.positions)));
  return s;
}

std::string case_words(const RopeCall& c) {
  std::string s =
      "minimal case: " + case_head(c) + fmt::format("  x = {}\n", shown(std::span<const double>(c.x)));
  if (!c.y.empty()) s += fmt::format("  y = {} (the kernel's output)\n", shown(std::span<const double>(c.y)));
  return s;
}

}  // namespace

namespace {
// $PE_LAST_CASE: each call's case written before the call, so that when a kernel takes the binary down
// (a crash, an endless loop) `verify` names the case it was in. One descriptor, rewritten in place.
void announce(const RopeCall& c) {
  static const int fd = [] {
    const char* path = std::getenv("PE_LAST_CASE");
    return path == nullptr || *path == '\0' ? -1
                                            : ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }();
  if (fd < 0) return;
  const std::string line = case_head(c);  // inputs are too long for a line
  if (::pwrite(fd, line.data(), line.size(), 0) >= 0) (void)::ftruncate(fd, static_cast<off_t>(line.size()));
}
}  // namespace

void run_rope(const harness::Instance& in, const RopePlan& plan, std::span<const std::int64_t> positions,
              std::int64_t heads, harness::TypedBuffer& x, RopeDirection direction) {
  t_last =
      RopeCall{in, plan.params(), {positions.begin(), positions.end()}, heads, direction, x.values(), {}, {}};
  announce(*t_last);
  try {
    harness::rotate_in_place(in, plan, positions, heads, x, direction);
  } catch (const KernelFault& e) {
    t_last->fault = e.what();
    throw;
  }
  t_last->y = x.values();
}

namespace case_log {
void begin_property() { t_failed.reset(); }
void begin_case() { t_last.reset(); }
void case_failed(const KernelFault* fault) {
  t_failed = t_last;
  if (fault != nullptr && (!t_failed || t_failed->fault != fault->what())) t_failed.reset();
}
}  // namespace case_log

std::string failure_report(const std::string& description, const std::string& failure,
                           const rc::detail::Example& counterexample) {
  // RapidCheck's words for a thrown exception (a kernel's fault among them) on a line of their own.
  constexpr std::string_view kThrown = "Exception thrown with message:\n";
  std::string what = failure.starts_with(kThrown) ? failure.substr(kThrown.size()) : failure;
  // RC_FAIL's "file:line:\nRC_FAIL(<its source>)\n\n<message>": the message, then where.
  if (const std::size_t source = what.find(":\nRC_FAIL("), blank = what.find("\n\n", source);
      source != std::string::npos && blank != std::string::npos)
    what = what.substr(blank + 2) + " (" + what.substr(0, source) + ")";
  std::string s = fmt::format("property: {}\nfailure: {}\n", description, what);
  if (t_failed) return s + case_words(*t_failed) + diagnosis(*t_failed);
  s += "minimal case (RapidCheck's counterexample):\n";
  for (const auto& [name, value] : counterexample) {
    std::string v = value;
    std::replace(v.begin(), v.end(), '\n', ' ');
    if (v.size() > 160) v = v.substr(0, 150) + fmt::format(" ... ({} characters)", v.size());
    s += fmt::format("  {} = {}\n", name, v);
  }
  return s;
}

}  // namespace pe::testing
