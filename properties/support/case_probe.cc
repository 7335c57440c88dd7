#include "support/case_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "pe/check/check.h"
#include "pe/harness/run.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

constexpr std::size_t kTokens = 64, kHeads = 4;
// Fewer pairs than this leave the check engine too few frequencies to tell one scaling rule from another.
constexpr std::int64_t kMinHeadDim = 64;

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
  if (reads_field(r.type, "original_max_position") && r.original_max_position > 0)
    s.original_max_position = r.original_max_position;
  if (r.seq_len > 0 && (r.type == T::Dynamic || r.type == T::LongRope)) s.seq_len = r.seq_len;
  if (r.type == T::Yarn) {
    s.beta_fast = r.beta_fast, s.beta_slow = r.beta_slow, s.truncate = r.truncate;
    if (r.mscale && r.mscale_all_dim) s.mscale = r.mscale, s.mscale_all_dim = r.mscale_all_dim;
  }
  if (r.type == T::Yarn && r.yarn_attention != YarnAttention::Replace) s.yarn_attention = r.yarn_attention;
  if (r.type == T::Dynamic) {
    if (r.dynamic_semantics != DynamicSemantics::Live) s.dynamic_semantics = r.dynamic_semantics;
    s.alpha = r.alpha;
  }
  if (r.type == T::Proportional) s.partial_rotary_factor = r.partial_rotary_factor;
  if (r.type == T::Llama3) s.low_freq_factor = r.low_freq_factor, s.high_freq_factor = r.high_freq_factor;
  if (r.type == T::LongRope)
    s.short_factor = r.short_factor, s.long_factor = r.long_factor, s.longrope_switch = r.longrope_switch;
  return o;
}

// The claims of a check report; empty when it makes none.
std::string claims_of(const check::Report& r) {
  std::string out;
  for (const check::Finding& f : r.doc.explanations.value_or(std::vector<check::Finding>{})) {
    out += fmt::format("  the data fits: {} ({})\n", f.fits, f.support);
    if (f.restated) out += fmt::format("    {}: {}\n", f.restated->label, f.restated->text);
  }
  return out;
}

std::string closest_of(const check::Report& r) {
  if (r.doc.diagnosis && !r.doc.diagnosis->empty())
    return fmt::format(
        "  undetermined: no convention fits within its tolerance; the closest: {} (residual {:.3g})\n",
        r.doc.diagnosis->front().convention, r.doc.diagnosis->front().residual);
  return "  undetermined: the check names no convention\n";
}

// The configuration with every channel count times k (at least kMinHeadDim channels), so that the
// frequencies the rule forms are many; a vision form's grid is not widened. LongRoPE's per-pair lists go on
// with their last factor, as Python's verify_rope widens them.
RopeParams widened(const RopeParams& p) {
  if (p.head_dim >= kMinHeadDim || p.form.vision != VisionRope::None) return p;
  const std::int64_t k = (kMinHeadDim + p.head_dim - 1) / p.head_dim;
  RopeParams w = p;
  w.head_dim *= k, w.rotary_dim *= k, w.rotary_offset *= k;
  for (std::int64_t& s : w.form.mrope_section) s *= k;
  const std::size_t pairs = RopePlan(w).n_pairs();
  for (std::vector<double>* list : {&w.scaling.short_factor, &w.scaling.long_factor})
    if (!list->empty()) list->resize(pairs, list->back());
  return w;
}

// Axis 0 at p; the other axes apart from it and in no simple ratio, so that each pair's axis reads back.
std::vector<std::int64_t> on_axes(const std::vector<std::int64_t>& p, std::size_t axes) {
  static constexpr std::int64_t kNum[] = {1, 5, 3, 7}, kDen[] = {1, 8, 13, 11};
  std::vector<std::int64_t> out;
  for (std::size_t a = 0; a < axes; ++a)
    for (const std::int64_t q : p) out.push_back(a == 0 ? q : q * kNum[a % 4] / kDen[a % 4] + 3);
  return out;
}

struct Probe {
  RopeParams params;
  std::vector<std::int64_t> positions;  // axis 0's
  std::string where;
};

// 0, 1, 2, 3, then geometric up to `top`: the slow pairs turn too, and the rule's wavelength bands are all
// crossed.
std::vector<std::int64_t> spread(std::int64_t top) {
  std::vector<std::int64_t> p = {0, 1, 2, 3};
  while (p.size() < kTokens) {
    const double step = std::pow(static_cast<double>(top), static_cast<double>(p.size()) / (kTokens - 1));
    p.push_back(std::max(p.back() + 1, static_cast<std::int64_t>(std::llround(step))));
  }
  return p;
}

// First positions spread across the configuration's original context (past L·factor, where every band of
// a scaling rule turns), then consecutive ones ending at the case's largest (a failure that needs its own
// positions), each at the widened configuration, then at the case's own.
std::vector<Probe> probes_of(const RopeCall& c) {
  const std::int64_t largest = *std::max_element(c.positions.begin(), c.positions.end());
  const std::int64_t reach = c.instance.contract().max_position;
  const RopeScaling& s = c.params.scaling;
  const double context = s.original_max_position > 0
                             ? 4.0 * static_cast<double>(s.original_max_position) * std::max(1.0, s.factor)
                             : static_cast<double>(std::max<std::int64_t>(largest, 4096));
  const std::int64_t top = std::min<std::int64_t>(reach, static_cast<std::int64_t>(context));
  std::vector<std::int64_t> consecutive(kTokens);
  const std::int64_t first = std::max<std::int64_t>(0, std::min(largest, reach) - (kTokens - 1));
  for (std::size_t t = 0; t < kTokens; ++t) consecutive[t] = first + static_cast<std::int64_t>(t);
  std::vector<Probe> out;
  const RopeParams wide = widened(c.params);
  const bool wider = wide.head_dim != c.params.head_dim;
  for (const RopeParams* p : {&wide, &c.params}) {
    if (p == &c.params && !wider) break;
    const std::string dims = fmt::format("head_dim {}, ", p->head_dim);
    out.push_back({*p, spread(top), dims + fmt::format("positions 0..{} spread", top)});
    out.push_back(
        {*p, consecutive, dims + fmt::format("positions {}..{}", consecutive.front(), consecutive.back())});
  }
  return out;
}

struct Outcome {
  std::string claims, note;  // claims: the data fits ...; note: what else it came to
};

Outcome run_probe(const RopeCall& c, const Probe& probe) {
  const RopePlan plan(probe.params);
  const std::size_t axes = plan.n_axes(), hd = plan.head_dim();
  const std::vector<std::int64_t> positions = on_axes(probe.positions, axes);
  const std::vector<double> x = seeded_inputs(c.instance.dtype, kTokens * kHeads * hd, 0x5eed);
  harness::TypedBuffer y = harness::buffer_of(c.instance.dtype, x);
  try {
    harness::rotate_in_place(c.instance, plan, positions, static_cast<std::int64_t>(kHeads), y);
  } catch (const std::exception& e) {
    return {"", fmt::format("  the call failed: {}\n", e.what())};
  }
  const std::vector<double> out = y.values();
  check::RopeRequest request;
  const std::vector<std::size_t> shape = {kTokens, kHeads, hd};
  request.x = {x, shape, c.instance.dtype, "x", nullptr};
  request.y = {out, shape, c.instance.dtype, "y", nullptr};
  request.positions.values = positions;
  if (axes > 1) request.positions.shape = {axes, kTokens};
  request.spec = spec_of(probe.params);
  request.budget.contract = c.instance.variant->name();
  try {
    const check::Report r = check::check_rope(request, check::Names());
    if (r.passed) return {"", "  within the contract there\n"};
    return {claims_of(r), closest_of(r)};
  } catch (const std::exception& e) {
    return {"", fmt::format("  the check could not take this configuration: {}\n", e.what())};
  }
}

}  // namespace

std::string probe_diagnosis(const RopeCall& c) {
  if (!c.fault.empty())
    return "diagnosis: the kernel writes outside its rows (the guard zones around its buffer: where, "
           "above)\n";
  const std::string rerun = fmt::format(
      "the kernel rerun under this case's configuration on {} tokens x {} heads", kTokens, kHeads);
  std::string notes;
  bool failed_somewhere = false;
  for (const Probe& probe : probes_of(c)) {
    const Outcome o = run_probe(c, probe);
    if (!o.claims.empty()) return fmt::format("diagnosis ({}, {}):\n{}", rerun, probe.where, o.claims);
    failed_somewhere |= o.note.find("within the contract") == std::string::npos;
    notes += fmt::format("  at {}:\n  {}", probe.where, o.note);
  }
  return fmt::format("diagnosis ({}): undetermined{}\n{}", rerun,
                     failed_somewhere ? ": no larger call's output names a cause"
                                      : ": every larger call is within the contract (the failure needs this "
                                        "case's own positions, values or shape)",
                     notes);
}

}  // namespace pe::testing
