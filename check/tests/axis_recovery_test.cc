// Which position axis each M-RoPE pair read, read back from the data (issue 33: sections in the wrong order):
// a float64 rotation by another rule's axes gives every pair its kernel's axis; positions equal on two axes
// leave their pairs fitting both, and on every axis (text tokens) determine no pair.
#include "readback/axis_recovery.h"

#include <gtest/gtest.h>

#include "mrope_data.h"

namespace pe::check {
namespace {

using mrope_testing::Axes;
using mrope_testing::mrope;
using mrope_testing::rotated_by;

TEST(AxisRecovery, EveryPairReadsItsKernelsAxis) {
  const RopePlan given(mrope(32, {3, 5, 8}));
  const RopeForm kernel = mrope(32, {8, 5, 3}).form;
  const RecoveredAxes r = recover_axes(rotated_by(given, kernel).data(), given);
  ASSERT_EQ(r.axis.size(), 16u);
  EXPECT_EQ(r.determined, 16u);
  for (std::size_t j = 0; j < 16; ++j) {
    ASSERT_TRUE(r.axis[j]) << j;
    EXPECT_EQ(*r.axis[j], axis_of_pair(kernel, 16, j)) << j;
    EXPECT_EQ(r.fitting[j], 1u << *r.axis[j]) << j;
  }
  EXPECT_EQ(r.apart[0 * 3 + 0], 0);
  EXPECT_GT(r.apart[1 * 3 + 2], 0);
}

TEST(AxisRecovery, TwoAxesOfOnePositionLeaveTheirPairsUndetermined) {
  const RopePlan given(mrope(32, {3, 5, 8}));
  const RopeForm kernel = mrope(32, {8, 5, 3}).form;
  const RecoveredAxes r = recover_axes(rotated_by(given, kernel, Axes::SameHW).data(), given);
  EXPECT_EQ(r.apart[1 * 3 + 2], 0);
  for (std::size_t j = 0; j < 16; ++j) {
    if (axis_of_pair(kernel, 16, j) == 0) {
      ASSERT_TRUE(r.axis[j]) << j;
      EXPECT_EQ(*r.axis[j], 0u);
    } else {
      EXPECT_FALSE(r.axis[j]) << j;
      EXPECT_EQ(r.fitting[j], 0b110u) << j;  // h and w alike
    }
  }
}

TEST(AxisRecovery, EqualPositionsOnEveryAxisDetermineNoPair) {
  const RopePlan given(mrope(32, {3, 5, 8}));
  const RecoveredAxes r =
      recover_axes(rotated_by(given, mrope(32, {8, 5, 3}).form, Axes::SameAll).data(), given);
  EXPECT_EQ(r.determined, 0u);
  for (const unsigned f : r.fitting) EXPECT_EQ(f, 0b111u);
}

TEST(AxisRecovery, TextRopeReadsNothing) {
  const RopePlan given(RopeParams{32, 32, 10000.0, Layout::HalfSplit});
  const mrope_testing::MropeData m = rotated_by(RopePlan(mrope(32, {3, 5, 8})), mrope(32, {3, 5, 8}).form);
  const RecoveredAxes r = recover_axes(m.data(), given);
  EXPECT_EQ(r.determined, 0u);
  EXPECT_EQ(r.n_axes, 0u);
}

}  // namespace
}  // namespace pe::check
