// Values kept process-wide by a key of their parameters' bytes: the plans and their ladders (impl), the
// reference's ladders and frequency tables (reference). One map, one way of writing a key.
#pragma once

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pe/rope_form.h"
#include "pe/rope_scaling.h"

namespace pe::detail {

// A key's bytes: a value's own (a double's bits: -0 and 0 are two keys, which costs a recomputation at
// most), an optional's presence first, a list's length first, so that no two parameter sets share one.
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

// Every field of a scaling and a form (plan_cache.cc, where the structs' sizes guard it against a field
// added and left out).
void put_scaling_and_form(std::string& k, const RopeScaling& s, const RopeForm& f);

// Values kept by key, at most `most`, then they start over (objects still holding one keep it). Made with
// new and never destroyed: a plan may be built while other statics are destroyed.
template <class V>
class Kept {
 public:
  explicit Kept(std::size_t most) : most_(most) {}
  std::shared_ptr<const V> find(const std::string& key) const {
    const std::lock_guard<std::mutex> guard(lock_);
    const auto it = values_.find(key);
    return it == values_.end() ? nullptr : it->second;
  }
  std::shared_ptr<const V> keep(const std::string& key, V value) {
    auto kept = std::make_shared<const V>(std::move(value));
    const std::lock_guard<std::mutex> guard(lock_);
    if (values_.size() >= most_) values_.clear();
    values_.emplace(key, kept);
    return kept;
  }
  // The value of `key`, made by make() (a std::shared_ptr<const V>) under the lock where none is kept: one
  // value per key however many threads ask at once, for values that are costly to make twice or that
  // callers fill in together (the reference's frequency tables).
  template <class F>
  std::shared_ptr<const V> find_or_make(const std::string& key, F&& make) {
    const std::lock_guard<std::mutex> guard(lock_);
    if (const auto it = values_.find(key); it != values_.end()) return it->second;
    if (values_.size() >= most_) values_.clear();
    return values_.emplace(key, make()).first->second;
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

}  // namespace pe::detail
