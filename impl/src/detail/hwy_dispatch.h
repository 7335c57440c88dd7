// Which compiled Highway target HWY_DYNAMIC_DISPATCH calls, as a value: the registry binds a Highway
// variant's plain name to that target's kernels when the library loads, instead of dispatching at
// each call through an HWY_EXPORT table.
#pragma once

#include <hwy/targets.h>

#include <cstdint>

namespace pe::detail {

// The target HWY_DYNAMIC_DISPATCH would call in a translation unit whose HWY_TARGETS is `compiled`
// when hwy::SupportedTargets() is `supported` (hwy 1.0.3, targets.h and highway.h): the best
// (lowest-bit) target that is both compiled and supported among those the dispatch table has a slot
// for (ChosenTarget::GetIndex over HWY_CHOOSE_TARGET_LIST); when there is none, the table's last
// entry (HWY_CHOOSE_FALLBACK): EMU128 if compiled, else SCALAR if compiled, else the static target.
// Pass the caller's own HWY_TARGETS, as GetIndex uses the calling unit's.
inline std::int64_t dispatched_target(std::int64_t supported, std::int64_t compiled) noexcept {
  // The bits HWY_CHOSEN_TARGET_SHIFT keeps: the architecture's dynamically dispatched targets.
  constexpr int kLowestDynamicBit = HWY_HIGHEST_TARGET_BIT + 1 - HWY_MAX_DYNAMIC_TARGETS;
  constexpr std::int64_t kDynamic = ((std::int64_t{1} << HWY_MAX_DYNAMIC_TARGETS) - 1) << kLowestDynamicBit;
  const std::int64_t candidates = supported & compiled & kDynamic;
  if (candidates != 0) return candidates & -candidates;
  if ((compiled & HWY_EMU128) != 0) return HWY_EMU128;
  if ((compiled & HWY_SCALAR) != 0) return HWY_SCALAR;
  return HWY_STATIC_TARGET;
}

}  // namespace pe::detail
