#include "plan_cache.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace pe::detail {
namespace {

// A field added to the parameters must be added to the key, or two plans of different parameters would
// share it: these sizes (x86-64's libstdc++) fail the build until rope_plan_key is updated with it.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(RopeScaling) == 216, "a RopeScaling field changed: update rope_plan_key");
static_assert(sizeof(RopeForm) == 56, "a RopeForm field changed: update rope_plan_key");
static_assert(sizeof(RopeParams) == 312, "a RopeParams field changed: update rope_plan_key");
#endif

template <class T>
void put(std::string& k, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  k.append(bytes, sizeof(T));
}

template <class T>
void put(std::string& k, const std::optional<T>& v) {
  put(k, v.has_value());
  if (v) put(k, *v);
}

template <class T>
void put(std::string& k, const std::vector<T>& v) {
  put(k, v.size());
  for (const T& e : v) put(k, e);
}

// Values kept by key, at most `most`, then they start over (objects still holding one keep it). Never
// destroyed: a plan may be built while other statics are destroyed.
template <class V>
class Kept {
 public:
  explicit Kept(std::size_t most) : most_(most) {}
  std::shared_ptr<const V> find(const std::string& key) const {
    const std::lock_guard<std::mutex> guard(lock_);
    const auto it = values_.find(key);
    return it == values_.end() ? nullptr : it->second;
  }
  void keep(const std::string& key, V value) {
    auto kept = std::make_shared<const V>(std::move(value));
    const std::lock_guard<std::mutex> guard(lock_);
    if (values_.size() >= most_) values_.clear();
    values_.emplace(key, std::move(kept));
  }
  void clear() {
    const std::lock_guard<std::mutex> guard(lock_);
    values_.clear();
  }

 private:
  const std::size_t most_;
  mutable std::mutex lock_;
  std::unordered_map<std::string, std::shared_ptr<const V>> values_;
};

Kept<RopePlan>& plans() {
  static auto* kept = new Kept<RopePlan>(512);
  return *kept;
}
Kept<std::vector<long double>>& ladders() {
  static auto* kept = new Kept<std::vector<long double>>(256);  // as the reference's (reference.cc)
  return *kept;
}

}  // namespace

std::string rope_plan_key(const RopeParams& p) {
  std::string k;
  k.reserve(160);
  put(k, p.head_dim), put(k, p.rotary_dim), put(k, p.base), put(k, p.layout), put(k, p.rotary_offset);
  const RopeScaling& s = p.scaling;
  put(k, s.type), put(k, s.factor), put(k, s.original_max_position), put(k, s.seq_len);
  put(k, s.beta_fast), put(k, s.beta_slow), put(k, s.truncate), put(k, s.mscale), put(k, s.mscale_all_dim);
  put(k, s.attention_factor), put(k, s.position_scale), put(k, s.low_freq_factor), put(k, s.high_freq_factor);
  put(k, s.short_factor), put(k, s.long_factor), put(k, s.longrope_switch);
  put(k, s.dynamic_semantics), put(k, s.yarn_attention), put(k, s.alpha), put(k, s.partial_rotary_factor);
  put(k, p.form.mrope_section), put(k, p.form.mrope_layout), put(k, p.form.vision), put(k, p.form.axes_dim);
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
