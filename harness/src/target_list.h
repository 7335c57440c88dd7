// The Highway targets a vector kernel was compiled for, as the CPU supports them, best first: each target's
// copy of the kernel registers itself from a static initializer (foreach_target.h compiles one per target),
// and the list is sorted once, on first use.
#pragma once

#include <hwy/targets.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace pe::harness::detail {

template <class T>
class TargetList {
 public:
  // Keeps t where the CPU supports `target`; whether it did (the static initializer's value).
  bool add(std::int64_t target, T t) {
    if ((hwy::SupportedTargets() & target) == 0) return false;
    added_.push_back({target, std::move(t)});
    return true;
  }
  // Highway's better targets have the lower bits.
  const std::vector<T>& best_first() {
    std::call_once(once_, [this] {
      std::sort(added_.begin(), added_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [target, t] : added_) sorted_.push_back(std::move(t));
    });
    return sorted_;
  }

 private:
  std::vector<std::pair<std::int64_t, T>> added_;
  std::vector<T> sorted_;
  std::once_flag once_;
};

// The one list of the kernels whose entry type is T (each kernel has its own).
template <class T>
TargetList<T>& target_list() {
  static TargetList<T> list;
  return list;
}

}  // namespace pe::harness::detail
