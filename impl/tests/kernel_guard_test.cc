// The guard zones (pe/kernel_guard.h): a correct kernel gives the bare call's bits; a kernel writing one
// element outside its rows, anywhere, is named with where, and the caller's buffer is left as it was.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "pe/pe.h"

namespace pe {
namespace {

// rope.scalar_f64's rotation, then one stray write chosen by the test, relative to row (t, h)'s start.
class StrayRope : public RopeVariant {
 public:
  using Stray = std::function<void(const RopePlan&, const RopeBatch&, double*)>;
  explicit StrayRope(Stray stray)
      : RopeVariant("rope.stray", find_variant("rope.scalar_f64")->contract()), stray_(std::move(stray)) {}
  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    static_cast<const RopeVariant*>(find_variant("rope.scalar_f64"))->apply(plan, batch, direction, x);
    stray_(plan, batch, static_cast<double*>(x.data));
  }

 private:
  Stray stray_;
};

struct Rows {
  std::size_t tokens = 3, heads = 2, head_dim = 8;
  std::vector<double> x = std::vector<double>(tokens * heads * head_dim);
  std::vector<std::int64_t> positions = {5, 1000, 7};
  Rows() {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25 * static_cast<double>(i % 13) - 1;
  }
};

std::string fault_of(const Variant& v, const RopeParams& params, Rows& r,
                     GuardLayout layout = GuardLayout::Gapped) {
  const ScopedKernelGuard rows(kernel_guard(), layout);
  const std::vector<double> before = r.x;
  try {
    rope_apply(v, RopePlan(params), r.positions, static_cast<std::int64_t>(r.heads), std::span<double>(r.x));
  } catch (const KernelFault& e) {
    EXPECT_EQ(std::memcmp(before.data(), r.x.data(), before.size() * sizeof(double)), 0)
        << "a faulting call must leave the caller's buffer as it was";
    EXPECT_EQ(e.variant(), "rope.stray");
    return e.what();
  }
  return "";
}

TEST(KernelGuard, ACorrectKernelGivesTheBareCallsBitsInEveryBatchLayout) {
  const Variant& v = *find_variant("rope.scalar_f64");
  const RopePlan plan(RopeParams{8, 6, 10000.0, Layout::HalfSplit, {}, 2, {}});
  const std::vector<std::int64_t> positions = {3, 70000, 12};
  // Heads-first with the caller's own gaps (stride 11, token stride 40): rows move, the gaps stay.
  const KernelGuard before = kernel_guard();
  std::vector<double> bare(3 * 40 + 8);
  for (std::size_t i = 0; i < bare.size(); ++i) bare[i] = std::ldexp(static_cast<double>(i % 17) - 8, -3);
  const std::vector<double> input = bare;
  const RopeBatch batch{positions, 1, 3, 11, 40};
  {
    const ScopedKernelGuard off(KernelGuard::Off);
    rope_apply(v, plan, batch, buffer(std::span<double>(bare)));
  }
  for (GuardLayout layout : {GuardLayout::Gapped, GuardLayout::Callers, GuardLayout::Alternate}) {
    std::vector<double> guarded = input;
    const ScopedKernelGuard all(KernelGuard::All, layout);
    rope_apply(v, plan, batch, buffer(std::span<double>(guarded)));
    EXPECT_EQ(std::memcmp(bare.data(), guarded.data(), bare.size() * sizeof(double)), 0)
        << "layout " << static_cast<int>(layout);
  }
  EXPECT_EQ(kernel_guard(), before) << "the scopes restore the mode they found";
  EXPECT_EQ(guard_layout(), GuardLayout::Alternate);
}

TEST(KernelGuard, OneElementPastARowIsNamedWithItsRowAndChannel) {
  StrayRope v(
      [](const RopePlan& plan, const RopeBatch& b, double* x) { x[b.row(1, 1) + plan.head_dim()] = 0; });
  Rows r;
  EXPECT_EQ(
      fault_of(v, {8, 8, 10000.0}, r),
      "rope.stray wrote outside its rows: 1 element past row (token 1, head 1), in the gap between tokens 1 "
      "and 2: channel 8 of a 8-channel row (rotary_offset 0, rotary_dim 8)");
}

TEST(KernelGuard, AWriteIntoTheGapBetweenHeadsNamesBothHeads) {
  // Rows placed at h·head_dim + 2 (a stride taken as head_dim, off by two): row 1's writes past row 0.
  StrayRope v([](const RopePlan&, const RopeBatch& b, double* x) {
    for (std::size_t c = 0; c < 2; ++c) x[b.row(0, 0) + 8 + c] = 1;
  });
  Rows r;
  EXPECT_EQ(
      fault_of(v, {8, 8, 10000.0}, r),
      "rope.stray wrote outside its rows: 2 elements past row (token 0, head 0), in the gap between heads 0 "
      "and 1 of token 0: channels 8\u20139 of a 8-channel row (rotary_offset 0, rotary_dim 8)");
}

TEST(KernelGuard, AWriteJustBeforeARowIsNamedAsBeforeIt) {
  StrayRope v([](const RopePlan&, const RopeBatch& b, double* x) { x[b.row(2, 0) - 1] = 1; });
  Rows r;
  EXPECT_EQ(
      fault_of(v, {8, 8, 10000.0}, r),
      "rope.stray wrote outside its rows: 1 element before row (token 2, head 0), in the gap between tokens "
      "1 and 2: channel -1 of a 8-channel row (rotary_offset 0, rotary_dim 8)");
}

TEST(KernelGuard, AWriteBeforeTheBufferIsNamed) {
  StrayRope v([](const RopePlan&, const RopeBatch&, double* x) { x[-1] = 1; });
  Rows r;
  EXPECT_EQ(fault_of(v, {8, 8, 10000.0}, r),
            "rope.stray wrote outside its rows: 1 element before the buffer: channel -1 before row (token 0, "
            "head 0), the first in memory, of a 8-channel row (rotary_offset 0, rotary_dim 8)");
}

TEST(KernelGuard, APassThroughChannelWrittenIsNamed) {
  StrayRope v(
      [](const RopePlan&, const RopeBatch& b, double* x) { x[b.row(2, 1) + 6] = -x[b.row(2, 1) + 6] - 1; });
  Rows r;
  EXPECT_EQ(
      fault_of(v, {8, 4, 10000.0, Layout::HalfSplit, {}, 2, {}}, r),
      "rope.stray wrote outside its rows: 1 element into pass-through channel 6 of row (token 2, head 1): a "
      "8-channel row whose rotated channels are 2\u20135 (rotary_offset 2, rotary_dim 4)");
}

TEST(KernelGuard, InTheCallersLayoutAWritePastTheLastRowIsNamed) {
  // Rows contiguous, as the caller laid them (a kernel's fast path): only the last row's stray write
  // leaves the rows; the others land in the next row (the numerical properties' to find).
  StrayRope v([](const RopePlan& plan, const RopeBatch& b, double* x) {
    x[b.row(b.tokens() - 1, b.heads - 1) + plan.head_dim()] = 0;
  });
  Rows r;
  EXPECT_EQ(
      fault_of(v, {8, 8, 10000.0}, r, GuardLayout::Callers),
      "rope.stray wrote outside its rows: 1 element past row (token 2, head 1), the last row in memory: "
      "channel 8 of a 8-channel row (rotary_offset 0, rotary_dim 8)");
}

TEST(KernelGuard, ManyPlacesAreCounted) {
  StrayRope v([](const RopePlan& plan, const RopeBatch& b, double* x) {
    for (std::size_t t = 0; t < b.tokens(); ++t)
      for (std::size_t h = 0; h < b.heads; ++h) x[b.row(t, h) + plan.head_dim()] = 0;
  });
  Rows r;
  const std::string fault = fault_of(v, {8, 8, 10000.0}, r);
  EXPECT_NE(fault.find("1 element past row (token 0, head 0)"), std::string::npos) << fault;
  EXPECT_NE(fault.find("; 5 more elements outside the rows, in 5 more places"), std::string::npos) << fault;
}

// A table kernel writing one element past its last row, and a fused add writing a padded row.
class StrayTable : public SinusoidalVariant {
 public:
  StrayTable() : SinusoidalVariant("sinusoidal.stray", find_variant("sinusoidal.scalar_f64")->contract()) {}
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    static_cast<const SinusoidalVariant*>(find_variant("sinusoidal.scalar_f64"))->table(plan, positions, out);
    static_cast<double*>(out.data)[out.size] = 0;
  }
  void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                Buffer out) const noexcept override {
    static_cast<const SinusoidalVariant*>(find_variant("sinusoidal.scalar_f64"))
        ->table_at(plan, positions, out);
    static_cast<double*>(out.data)[out.size] = 0;
  }
  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions, std::span<const std::uint8_t>,
           Buffer embeddings) const noexcept override {
    static_cast<const SinusoidalVariant*>(find_variant("sinusoidal.scalar_f64"))
        ->add(plan, positions, {}, embeddings);
  }
};

TEST(KernelGuard, TablesAndPaddedRowsAreGuarded) {
  const StrayTable v;
  const SinusoidalPlan plan({4, 10000.0, Layout::Interleaved});
  const std::vector<std::int64_t> positions = {0, 9};
  std::vector<double> out(8, 0.5);
  try {
    sinusoidal_table(v, plan, positions, std::span<double>(out));
    ADD_FAILURE() << "no fault";
  } catch (const KernelFault& e) {
    EXPECT_STREQ(
        e.what(),
        "sinusoidal.stray wrote outside its rows: 1 element past the table's end: channel 4 of its last row "
        "1 (2 rows of 4)");
  }
  EXPECT_EQ(out, std::vector<double>(8, 0.5));
  const std::vector<std::uint8_t> padding = {0, 1};
  try {
    sinusoidal_add(v, plan, positions, std::span<double>(out), padding);
    ADD_FAILURE() << "no fault";
  } catch (const KernelFault& e) {
    EXPECT_STREQ(
        e.what(),
        "sinusoidal.stray wrote outside its rows: 4 elements into padding row 1 of the embeddings (its "
        "padding flag is set): channels 0\u20133");
  }
}

// Large copies sit between protected pages: a write past the canary zones faults at once.
TEST(KernelGuardDeathTest, AFarWriteHitsAProtectedPage) {
  StrayRope v([](const RopePlan& plan, const RopeBatch&, double* x) {
    // The front zone is one gap long (a row and 64 bytes, rounded to 64 bytes): one element more is the page.
    const auto gap =
        static_cast<std::ptrdiff_t>((plan.head_dim() * sizeof(double) + 64 + 63) / 64 * 64 / sizeof(double));
    x[-gap - 1] = 1;
  });
  Rows r;
  r.tokens = 64;
  r.heads = 4;
  r.head_dim = 64;
  r.x.assign(r.tokens * r.heads * r.head_dim, 1.0);
  r.positions.assign(r.tokens, 3);
  EXPECT_DEATH(fault_of(v, {64, 64, 10000.0}, r), "");
}

}  // namespace
}  // namespace pe
