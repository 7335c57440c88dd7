// The plan's side of issue 49's switches: flip_sin_to_cos exchanges sin_index and cos_index, a
// downscale_freq_shift's ω_i = base^(−i/(dim/2 − shift)) within the 1.02·2^-53 every contract assumes
// (against 200-bit MPFR), any finite nonzero scale taken; every registered variant that reads the switches
// writes the flipped table as the unflipped one with each pair's two channels exchanged, bit for bit; a
// variant that does not (a C plugin's) is refused naming the switch.
#include <gtest/gtest.h>

#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "pe/api.h"
#include "pe/errors.h"
#include "pe/plan.h"
#include "pe/variant.h"

namespace pe {
namespace {

using SwitchReal = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<200>>;

SinusoidalParams switched(std::int64_t dim, Layout layout, bool flip, double shift, double base = 10000.0) {
  SinusoidalParams p{dim, base, layout};
  p.flip_sin_to_cos = flip, p.downscale_freq_shift = shift;
  return p;
}

TEST(SinusoidalPlanSwitches, FlipExchangesSinAndCosChannels) {
  for (const Layout layout : {Layout::Interleaved, Layout::Concatenated}) {
    const SinusoidalPlan plain(switched(16, layout, false, 0)), flipped(switched(16, layout, true, 0));
    for (std::size_t i = 0; i < 8; ++i) {
      // The paper's (2i, 2i+1); tensor2tensor's [sin | cos] (i, 8 + i).
      const std::size_t s = layout == Layout::Interleaved ? 2 * i : i;
      const std::size_t c = layout == Layout::Interleaved ? 2 * i + 1 : 8 + i;
      EXPECT_EQ(plain.sin_index(i), s);
      EXPECT_EQ(plain.cos_index(i), c);
      EXPECT_EQ(flipped.sin_index(i), c);
      EXPECT_EQ(flipped.cos_index(i), s);
    }
    // The flip leaves the frequencies as they are.
    EXPECT_EQ(std::vector<double>(plain.inv_freq().begin(), plain.inv_freq().end()),
              std::vector<double>(flipped.inv_freq().begin(), flipped.inv_freq().end()));
  }
}

TEST(SinusoidalPlanSwitches, ShiftedFrequenciesWithinTheContractsAssumption) {
  std::size_t checked = 0;
  for (const std::int64_t dim : {4, 16, 64, 384, 1024})
    for (const double shift : {0.0, 0.5, 1.0, 3.0})
      for (const double base : {10000.0, 500000.0, 1e8, 1e12}) {
        if (static_cast<double>(dim / 2) - shift <= 0) continue;
        const SinusoidalPlan plan(switched(dim, Layout::Concatenated, false, shift, base));
        EXPECT_EQ(plan.frequency_dim(), static_cast<std::size_t>(static_cast<double>(dim) - 2 * shift));
        ASSERT_EQ(plan.inv_freq().size(), static_cast<std::size_t>(dim / 2));
        for (std::size_t i = 0; i < plan.inv_freq().size(); ++i) {
          const SwitchReal exact =
              pow(SwitchReal(base), -SwitchReal(static_cast<unsigned>(i)) /
                                        (SwitchReal(static_cast<unsigned>(dim / 2)) - SwitchReal(shift)));
          const double rel = static_cast<double>(abs(SwitchReal(plan.inv_freq()[i]) - exact) / exact);
          ASSERT_LE(rel, 1.02 * 0x1p-53)
              << "dim " << dim << " shift " << shift << " base " << base << " i " << i;
          ++checked;
        }
      }
  EXPECT_GT(checked, 5000u);
}

void expect_plan_refused(const SinusoidalParams& p, const std::string& parameter) {
  try {
    const SinusoidalPlan plan(p);
    ADD_FAILURE() << "accepted; expected a refusal naming " << parameter;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), parameter) << e.what();
  }
}

TEST(SinusoidalPlanSwitches, TakesAScaleAndRefusesShiftsWithoutAnExponent) {
  for (const double scale : {1000.0, 0.5, -1.0}) {
    SinusoidalParams p = switched(16, Layout::Concatenated, true, 1);
    p.scale = scale;
    EXPECT_EQ(SinusoidalPlan(p).scale(), scale);
  }
  for (const double scale : {0.0, std::nan(""), HUGE_VAL}) {
    SinusoidalParams p = switched(16, Layout::Concatenated, true, 1);
    p.scale = scale;
    expect_plan_refused(p, "scale");
  }
  expect_plan_refused(switched(16, Layout::Concatenated, false, 8), "downscale_freq_shift");
  expect_plan_refused(switched(16, Layout::Concatenated, false, 0.25), "downscale_freq_shift");
  EXPECT_NO_THROW(SinusoidalPlan(switched(16, Layout::Concatenated, true, 7.5)));
}

// Storage of n elements of `type`, as the API's Buffer.
struct SwitchBuffer {
  std::vector<std::uint64_t> words;
  Buffer buffer;
  SwitchBuffer(std::size_t n, DType type) : words((n * size_of(type) + 7) / 8 + 1, 0) {
    buffer = {words.data(), n, type};
  }
  const unsigned char* at(std::size_t i) const {
    return reinterpret_cast<const unsigned char*>(words.data()) + i * size_of(buffer.dtype);
  }
};

// Every registered variant reading the switches: the flipped table is the unflipped one with each pair's sin
// and cos channels exchanged, bit for bit, in every layout and output type it has, shifted or not.
TEST(SinusoidalPlanSwitches, EveryVariantsFlippedTableExchangesEachPair) {
  const std::vector<std::int64_t> positions = {0, 1, 2, 3, 17, 63, 64, 1000, 4097, 123457, 1 << 20};
  std::size_t runs = 0;
  std::vector<std::string> failures;  // every variant's, not only the first
  for (const Variant* v : registry()) {
    if (v->family() != Family::Sinusoidal || !v->contract().table_switches) continue;
    for (const Layout layout : v->contract().layouts)
      for (const DType type : v->contract().outputs)
        for (const double shift : {0.0, 1.0}) {
          const std::int64_t dim = 40;
          const SinusoidalPlan plain(switched(dim, layout, false, shift)),
              flip(switched(dim, layout, true, shift));
          const std::size_t n = positions.size() * static_cast<std::size_t>(dim);
          SwitchBuffer a(n, type), b(n, type);
          sinusoidal_table(*v, plain, positions, a.buffer);
          sinusoidal_table(*v, flip, positions, b.buffer);
          const std::size_t w = size_of(type);
          std::size_t mismatched = 0;
          for (std::size_t r = 0; r < positions.size(); ++r)
            for (std::size_t i = 0; i < plain.n_pairs(); ++i) {
              const std::size_t row = r * static_cast<std::size_t>(dim);
              mismatched +=
                  std::memcmp(a.at(row + plain.sin_index(i)), b.at(row + plain.cos_index(i)), w) != 0;
              mismatched +=
                  std::memcmp(a.at(row + plain.cos_index(i)), b.at(row + plain.sin_index(i)), w) != 0;
            }
          if (mismatched != 0)
            failures.push_back(v->name() + " " + std::string(to_string(layout)) + " " +
                               std::string(to_string(type)) + " shift " + std::to_string(shift) + ": " +
                               std::to_string(mismatched) + " channels");
          ++runs;
        }
    // The shift is read: pair 1's sin at position 1 differs between shift 0 and 1 (ω_1 = 10^-0.2 vs
    // 10^-(4/19)).
    if (v->contract().outputs.empty()) continue;
    const DType type = v->contract().outputs.front();
    const Layout layout = v->contract().layouts.front();
    const SinusoidalPlan s0(switched(40, layout, false, 0)), s1(switched(40, layout, false, 1));
    SwitchBuffer a(40, type), b(40, type);
    const std::vector<std::int64_t> one = {1};
    sinusoidal_table(*v, s0, one, a.buffer);
    sinusoidal_table(*v, s1, one, b.buffer);
    EXPECT_NE(std::memcmp(a.at(s0.sin_index(1)), b.at(s1.sin_index(1)), size_of(type)), 0) << v->name();
  }
  EXPECT_GT(runs, 8u);
  std::string listed;
  for (const std::string& f : failures) listed += f + "\n";
  EXPECT_TRUE(failures.empty())
      << "flipped tables that are not the unflipped ones with each pair exchanged:\n"
      << listed;
}

// A variant computing the paper's table only, as a C plugin's (its plan carries neither switch).
class SwitchlessVariant : public SinusoidalVariant {
 public:
  using SinusoidalVariant::SinusoidalVariant;
  void table(const SinusoidalPlan&, std::span<const std::int64_t>, Buffer out) const noexcept override {
    std::memset(out.data, 0, out.size * size_of(out.dtype));
  }
  void table_at(const SinusoidalPlan&, std::span<const double>, Buffer out) const noexcept override {
    std::memset(out.data, 0, out.size * size_of(out.dtype));
  }
  void add(const SinusoidalPlan&, std::span<const std::int64_t>, std::span<const std::uint8_t>,
           Buffer) const noexcept override {}
};

TEST(SinusoidalPlanSwitches, AVariantWithoutSwitchesIsRefusedNamingTheSwitch) {
  Contract c;
  c.layouts = {Layout::Interleaved, Layout::Concatenated};
  c.outputs = {DType::F32};
  c.table_switches = false;
  const SwitchlessVariant v("sinusoidal.switchless_test", c);
  const std::vector<std::int64_t> positions = {0, 1, 2};
  std::vector<float> out(3 * 16, 7.0f), emb(3 * 16, 7.0f);
  const auto refused = [&](const SinusoidalParams& p, const std::string& parameter) {
    const SinusoidalPlan plan(p);
    try {
      sinusoidal_table(v, plan, positions, std::span<float>(out));
      ADD_FAILURE() << "table accepted; expected a refusal naming " << parameter;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.parameter(), parameter) << e.what();
    }
    try {
      sinusoidal_add(v, plan, positions, std::span<float>(emb));
      ADD_FAILURE() << "add accepted; expected a refusal naming " << parameter;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.parameter(), parameter) << e.what();
    }
    // Refused before anything is written.
    EXPECT_EQ(out, std::vector<float>(3 * 16, 7.0f));
  };
  refused(switched(16, Layout::Concatenated, true, 0), "flip_sin_to_cos");
  refused(switched(16, Layout::Interleaved, true, 1), "flip_sin_to_cos");
  refused(switched(16, Layout::Concatenated, false, 1), "downscale_freq_shift");
  // The other forms its plan cannot carry either: a scale, an odd dim's pad, real positions.
  SinusoidalParams scaled = switched(16, Layout::Concatenated, false, 0);
  scaled.scale = 1000;
  refused(scaled, "scale");
  refused(switched(15, Layout::Concatenated, false, 0), "dim");
  const std::vector<double> real = {0.0, 0.5, 999.0};
  try {
    sinusoidal_table_at(v, SinusoidalPlan(switched(16, Layout::Concatenated, false, 0)), real,
                        std::span<float>(out));
    ADD_FAILURE() << "table_at accepted; expected a refusal naming positions";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "positions") << e.what();
  }
  EXPECT_EQ(out, std::vector<float>(3 * 16, 7.0f));
  // The paper's table is what it computes: accepted.
  EXPECT_NO_THROW(sinusoidal_table(v, SinusoidalPlan(switched(16, Layout::Concatenated, false, 0)), positions,
                                   std::span<float>(out)));
  EXPECT_EQ(out, std::vector<float>(3 * 16, 0.0f));
}

}  // namespace
}  // namespace pe
