#include "plan_cache.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "pe/detail/kept.h"

namespace pe::detail {
namespace {

// A field added to the parameters must be added to the key, or two plans of different parameters would
// share it: these sizes (x86-64's libstdc++) fail the build until rope_plan_key (and for a scaling's or a
// form's field put_scaling_and_form, which the reference's frequency tables' key reads too) has it.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(RopeScaling) == 216, "a RopeScaling field changed: update put_scaling_and_form");
static_assert(sizeof(RopeForm) == 56, "a RopeForm field changed: update put_scaling_and_form");
static_assert(sizeof(RopeParams) == 312, "a RopeParams field changed: update rope_plan_key");
#endif

Kept<RopePlan>& plans() {
  static auto* kept = new Kept<RopePlan>(512);
  return *kept;
}
Kept<std::vector<long double>>& ladders() {
  static auto* kept = new Kept<std::vector<long double>>(256);  // as the reference's (reference.cc)
  return *kept;
}

}  // namespace

void put_scaling_and_form(std::string& k, const RopeScaling& s, const RopeForm& f) {
  put(k, s.type), put(k, s.factor), put(k, s.original_max_position), put(k, s.seq_len);
  put(k, s.beta_fast), put(k, s.beta_slow), put(k, s.truncate), put(k, s.mscale), put(k, s.mscale_all_dim);
  put(k, s.attention_factor), put(k, s.position_scale), put(k, s.low_freq_factor), put(k, s.high_freq_factor);
  put(k, s.short_factor), put(k, s.long_factor), put(k, s.longrope_switch);
  put(k, s.dynamic_semantics), put(k, s.yarn_attention), put(k, s.alpha), put(k, s.partial_rotary_factor);
  put(k, f.mrope_section), put(k, f.mrope_layout), put(k, f.vision), put(k, f.axes_dim);
}

std::string rope_plan_key(const RopeParams& p) {
  std::string k;
  k.reserve(160);
  put(k, p.head_dim), put(k, p.rotary_dim), put(k, p.base), put(k, p.layout), put(k, p.rotary_offset);
  put_scaling_and_form(k, p.scaling, p.form);
  return k;
}

std::shared_ptr<const RopePlan> kept_rope_plan(const std::string& key) { return plans().find(key); }

void keep_rope_plan(const std::string& key, const RopePlan& plan) { plans().keep(key, plan); }

void forget_rope_plans() {
  plans().clear();
  ladders().clear();
}

std::string powers_key(const RopeForm& form, std::size_t n_pairs, long double base) {
  std::string k;
  int exponent = 0;
  // The significand's bits as integers, 64 at a time (long double's padding bytes are not part of its value;
  // a 113-bit significand, aarch64's, needs the second).
  const long double scaled = std::ldexp(std::frexp(base, &exponent), 64);
  const auto high = static_cast<std::uint64_t>(scaled);
  put(k, high), put(k, static_cast<std::uint64_t>(std::ldexp(scaled - static_cast<long double>(high), 64)));
  put(k, exponent), put(k, n_pairs);
  put(k, form.mrope_section), put(k, form.mrope_layout), put(k, form.vision), put(k, form.axes_dim);
  return k;
}

std::shared_ptr<const std::vector<long double>> kept_powers(const std::string& key) {
  return ladders().find(key);
}

void keep_powers(const std::string& key, std::vector<long double> w) { ladders().keep(key, std::move(w)); }

}  // namespace pe::detail
