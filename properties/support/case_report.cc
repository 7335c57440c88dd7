#include "support/case_report.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "pe/check/check.h"
#include "pe/harness/run.h"
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

// The check engine's spec of the configuration a property drew (each parameter its method reads).
check::RopeSpec spec_of(const RopeParams& p) {
  using T = RopeScalingType;
  check::RopeSpec o;
  o.base = p.base;
  o.layout = p.layout;
  o.rotary_dim = p.rotary_dim;
  o.head_dim = p.head_dim;
  o.form.rotary_offset = p.rotary_offset;
  if (!p.form.mrope_section.empty()) {
    o.form.mrope_section = p.form.mrope_section;
    o.form.mrope_layout = p.form.mrope_layout;
  }
  if (p.form.vision != VisionRope::None) o.form.vision = p.form.vision;
  const RopeScaling& r = p.scaling;
  check::ScalingSpec& s = o.scaling;
  s.method = r.type;
  s.attention_factor = r.attention_factor;
  if (r.position_scale != 1) s.position_scale = r.position_scale;
  if (r.type == T::None) return o;
  s.factor = r.factor;
  if (r.type != T::Linear && r.type != T::Ntk) s.original_max_position = r.original_max_position;
  if (r.seq_len > 0 && (r.type == T::Dynamic || r.type == T::LongRope)) s.seq_len = r.seq_len;
  if (r.type == T::Yarn) {
    s.beta_fast = r.beta_fast, s.beta_slow = r.beta_slow, s.truncate = r.truncate;
    if (r.mscale && r.mscale_all_dim) s.mscale = r.mscale, s.mscale_all_dim = r.mscale_all_dim;
  }
  if (r.type == T::Llama3) s.low_freq_factor = r.low_freq_factor, s.high_freq_factor = r.high_freq_factor;
  if (r.type == T::LongRope)
    s.short_factor = r.short_factor, s.long_factor = r.long_factor, s.longrope_switch = r.longrope_switch;
  return o;
}

// The claims of a check report, or its closest candidate as undetermined.
std::string claims_of(const check::Report& r) {
  std::string out;
  for (const check::Finding& f : r.doc.explanations.value_or(std::vector<check::Finding>{})) {
    out += fmt::format("  the data fits: {} ({})\n", f.fits, f.support);
    if (f.restated) out += fmt::format("    {}: {}\n", f.restated->label, f.restated->text);
  }
  if (!out.empty()) return out;
  if (r.doc.diagnosis && !r.doc.diagnosis->empty())
    return fmt::format(
        "  undetermined: no convention fits within its tolerance; the closest: {} (residual {:.3g})\n",
        r.doc.diagnosis->front().convention, r.doc.diagnosis->front().residual);
  return "  undetermined: the check names no convention\n";
}

// The kernel rerun under the case's configuration on 48 tokens x 4 heads (positions ending at the case's
// largest, ordinary inputs), its output checked and explained by the check engine: a minimal case is too
// small to recover frequencies, positions or the channel pairing from.
std::string probe_diagnosis(const RopeCall& c);

std::string diagnosis(const RopeCall& c) {
  if (c.positions.empty()) return "diagnosis: undetermined (the call had no tokens)\n";
  try {
    return probe_diagnosis(c);
  } catch (const std::exception& e) {
    return fmt::format("diagnosis: undetermined ({})\n", e.what());
  }
}

std::string probe_diagnosis(const RopeCall& c) {
  if (!c.fault.empty())
    return "diagnosis: the kernel writes outside its rows (the guard zones around its buffer: where, "
           "above)\n";
  const RopePlan plan(c.params);
  const std::size_t axes = plan.n_axes(), tokens = 48, heads = 4, hd = plan.head_dim();
  const std::int64_t top = *std::max_element(c.positions.begin(), c.positions.end());
  const std::int64_t first =
      std::max<std::int64_t>(0, std::min(top, c.instance.contract().max_position) - 47);
  std::vector<std::int64_t> positions(axes * tokens);
  for (std::size_t a = 0; a < axes; ++a)
    for (std::size_t t = 0; t < tokens; ++t)
      positions[a * tokens + t] = first + static_cast<std::int64_t>(t * (a + 1) / axes);
  const std::vector<double> x = seeded_inputs(c.instance.dtype, tokens * heads * hd, 0x5eed);
  harness::TypedBuffer y = harness::buffer_of(c.instance.dtype, x);
  const std::string where = fmt::format(
      "the kernel rerun under this case's configuration on {} tokens x {} heads at positions {}..{}", tokens,
      heads, positions.front(), positions.back());
  try {
    harness::rotate_in_place(c.instance, plan, positions, static_cast<std::int64_t>(heads), y);
  } catch (const std::exception& e) {
    return fmt::format("diagnosis ({}): the call failed: {}\n", where, e.what());
  }
  const std::vector<double> out = y.values();
  check::RopeRequest request;
  const std::vector<std::size_t> shape = {tokens, heads, hd};
  request.x = {x, shape, c.instance.dtype, "x", nullptr};
  request.y = {out, shape, c.instance.dtype, "y", nullptr};
  request.positions.values = positions;
  if (axes > 1) request.positions.shape = {axes, tokens};
  request.spec = spec_of(c.params);
  request.budget.contract = c.instance.variant->name();
  try {
    const check::Report r = check::check_rope(request, check::Names());
    if (r.passed)
      return fmt::format(
          "diagnosis ({}): within the contract there; undetermined: the failure needs this case's own "
          "positions, values or shape\n",
          where);
    return fmt::format("diagnosis ({}):\n{}", where, claims_of(r));
  } catch (const std::exception& e) {
    return fmt::format("diagnosis: undetermined (the check could not take this configuration: {})\n",
                       e.what());
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
