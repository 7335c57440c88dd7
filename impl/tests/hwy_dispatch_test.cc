// The Highway variants' plain names ("rope.hwy") are bound when the library loads to the target
// detail::dispatched_target names (impl/src/detail/hwy_register.h), in place of HWY_DYNAMIC_DISPATCH.
// Held here against Highway itself: for every set of supported targets this CPU can mock, the target
// HWY_DYNAMIC_DISPATCH calls is the one dispatched_target names.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "hwy_dispatch_test.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace pe::hwy_dispatch_test::HWY_NAMESPACE {
std::int64_t CompiledFor() { return HWY_TARGET; }
}  // namespace pe::hwy_dispatch_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "detail/hwy_dispatch.h"
#include "pe/variant.h"

namespace pe::hwy_dispatch_test {
namespace {

HWY_EXPORT(CompiledFor);

TEST(HwyDispatch, NamesTheTargetHighwayDispatchesTo) {
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  // Every subset of this CPU's compiled targets (those without SCALAR/EMU128 reach the fallback).
  for (std::uint64_t subset = 1; subset < (std::uint64_t{1} << targets.size()); ++subset) {
    std::int64_t mock = 0;
    for (std::size_t i = 0; i < targets.size(); ++i)
      if ((subset >> i) & 1) mock |= targets[i];
    hwy::SetSupportedTargetsForTest(mock);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    const std::int64_t called = HWY_DYNAMIC_DISPATCH(CompiledFor)();
    const std::int64_t named = detail::dispatched_target(hwy::SupportedTargets(), HWY_TARGETS);
    EXPECT_EQ(called, named) << "supported " << hwy::SupportedTargets() << ": Highway calls "
                             << hwy::TargetName(called) << ", dispatched_target names "
                             << hwy::TargetName(named);
  }
  hwy::SetSupportedTargetsForTest(0);
  hwy::GetChosenTarget().DeInit();
}

TEST(HwyDispatch, EveryHighwayVariantHasItsDispatcherAndItsTarget) {
  const std::string best = hwy::TargetName(detail::dispatched_target(hwy::SupportedTargets(), HWY_TARGETS));
  for (const char* name : {"sinusoidal.hwy", "sinusoidal.exact", "rope.hwy", "rope.exact", "alibi.hwy"}) {
    EXPECT_NE(find_variant(name), nullptr) << name;
    EXPECT_NE(find_variant(std::string(name) + "@" + best), nullptr) << name << "@" << best;
  }
}

}  // namespace
}  // namespace pe::hwy_dispatch_test
#endif  // HWY_ONCE
