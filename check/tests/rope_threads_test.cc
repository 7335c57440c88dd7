// check_rope's pass on several threads (rope_pass.h: parts of consecutive tokens, merged in order) gives the
// report of one thread. With every element measured exactly (the screen off) the whole report, percentiles
// included, bit for bit; screened, all but the bands' 99th percentiles (each part measures its bands' first
// rows exactly where one pass takes the screen's estimates), whose |err| lies within the screen's radius.
// Passing and failing kernels, ties (a zero input: every error 0), NaN outputs, a NaN input, partial rotary
// with a moved channel, LongRoPE switching per token (the parts follow one pass's order) and M-RoPE, in
// float32, bfloat16 and float16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "held_values.h"
#include "pe/check/check.h"
#include "pe/check/golden.h"
#include "pe/harness/rope_screen.h"
#include "pe/harness/typed_buffer.h"

namespace pe::check {
namespace {

enum class Twist { None, IgnoresLate, MovedChannel, NanOutput, NanInput, Zero };

struct Case {
  std::string name;
  RopeParams kernel;
  RopeSpec spec;
  Twist twist = Twist::None;
  bool passes = true;
  std::size_t axes = 1;
};

RopeParams long_rope_kernel() {
  RopeParams p{64, 0, 1e4, Layout::HalfSplit};
  p.scaling.type = RopeScalingType::LongRope;
  p.scaling.original_max_position = 1900;
  p.scaling.factor = 4;
  p.scaling.longrope_switch = LongRopeSwitch::PerToken;
  for (std::size_t j = 0; j < 32; ++j) {
    p.scaling.short_factor.push_back(1 + 0.01 * static_cast<double>(j));
    p.scaling.long_factor.push_back(1 + 0.1 * static_cast<double>(j));
  }
  return p;
}

RopeSpec long_rope_spec(const RopeParams& p) {
  RopeSpec s;
  s.scaling.method = RopeScalingType::LongRope;
  s.scaling.original_max_position = p.scaling.original_max_position;
  s.scaling.factor = p.scaling.factor;
  s.scaling.longrope_switch = LongRopeSwitch::PerToken;
  s.scaling.short_factor = p.scaling.short_factor;
  s.scaling.long_factor = p.scaling.long_factor;
  return s;
}

std::vector<Case> cases() {
  const RopeParams plain{64, 0, 1e4, Layout::HalfSplit};
  RopeSpec partial;
  partial.rotary_dim = 32;
  RopeParams partial_kernel = plain;
  partial_kernel.rotary_dim = 32;
  RopeParams mrope_kernel = plain;
  mrope_kernel.form.mrope_section = {8, 12, 12};
  RopeSpec mrope;
  mrope.form.mrope_section = mrope_kernel.form.mrope_section;
  return {{"passing", plain, {}},
          {"M-RoPE", mrope_kernel, mrope, Twist::None, true, 3},
          {"ignores positions past 2000", plain, {}, Twist::IgnoresLate, false},
          {"another base", {64, 0, 5e5, Layout::HalfSplit}, {}, Twist::None, false},
          {"zero input (ties: every error 0)", plain, {}, Twist::Zero},
          {"NaN outputs", plain, {}, Twist::NanOutput, false},
          {"NaN input", plain, {}, Twist::NanInput},
          {"partial, moved", partial_kernel, partial, Twist::MovedChannel, false},
          {"LongRoPE per token", long_rope_kernel(), long_rope_spec(long_rope_kernel())},
          {"LongRoPE per token, zero input", long_rope_kernel(), long_rope_spec(long_rope_kernel()),
           Twist::Zero}};
}

Report check_in(RopeRequest r, std::size_t threads, bool screen) {
  r.threads = threads;
  return checked_with_screen(r, screen);
}

// Descending: the first parts hold the tokens past LongRoPE's original context, which one pass measures
// after the others (the parts must follow that order: ties keep one pass's first element). M-RoPE's other
// axes at 5p/8 and 3p/13.
std::vector<std::int64_t> positions_of(std::size_t tokens, std::size_t axes) {
  std::vector<std::int64_t> p;
  for (std::size_t a = 0; a < axes; ++a)
    for (std::size_t t = 0; t < tokens; ++t) {
      const auto q = static_cast<std::int64_t>((tokens - 1 - t) * 41);
      p.push_back(a == 0 ? q : a == 1 ? 5 * q / 8 : 3 * q / 13);
    }
  return p;
}

// A case's data (96 tokens x 3 heads x 64, its twist applied) and the request that reads it in place.
struct Built {
  static constexpr std::size_t tokens = 96, heads = 3, hd = 64;
  harness::TypedBuffer x, y;
  RopeRequest r;
  Built(const Case& c, DType type, std::mt19937_64& g) : x(type, tokens * heads * hd), y(type, x.size()) {
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    const std::vector<std::int64_t> positions = positions_of(tokens, c.axes);
    const RopeBatch batch = rope_batch_of({tokens, heads, hd}, positions, false, "x", c.axes);
    std::vector<double> xd(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      x.set(i, c.twist == Twist::Zero ? 0.0 : unit(g)), xd[i] = x.get(i);
    const std::vector<double> golden = golden_rope(c.kernel, batch, xd, type);
    for (std::size_t i = 0; i < y.size(); ++i) {
      const bool late = c.twist == Twist::IgnoresLate && positions[i / (heads * hd)] > 2000;
      y.set(i, late ? xd[i] : golden[i]);
    }
    if (c.twist == Twist::NanOutput)
      for (std::size_t t : {5, 50, 90}) y.set(t * heads * hd + 9, NAN);
    if (c.twist == Twist::NanInput) x.set(60 * heads * hd + 3, NAN);
    if (c.twist == Twist::MovedChannel) y.set(70 * heads * hd + 60, y.get(70 * heads * hd + 60) + 0.5);
    r.positions.values = positions;
    if (c.axes > 1) r.positions.shape = {c.axes, tokens};
    r.spec = c.spec;
    r.x = {{}, {tokens, heads, hd}, type, "x", x.view().data};
    r.y = {{}, {tokens, heads, hd}, type, "y", y.view().data};
  }
  Built(const Built&) = delete;
  Built& operator=(const Built&) = delete;
};

TEST(RopeThreads, EveryThreadCountGivesOneThreadsReport) {
  std::mt19937_64 g(20261205);
  for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
    for (const Case& c : cases()) {
      const Built b(c, type, g);
      const RopeRequest& r = b.r;
      const std::string what = std::string(to_string(type)) + " " + c.name;
      const Report one = check_in(r, 1, true), one_exact = check_in(r, 1, false);
      EXPECT_EQ(one.passed, c.passes) << what << "\n" << one.text;
      std::vector<double> p99_one;
      const std::string json_one = without_p99(one.json(), &p99_one).dump();
      for (const std::size_t threads : {2, 3, 7}) {
        const std::string where = what + ", " + std::to_string(threads) + " threads";
        EXPECT_EQ(check_in(r, threads, false).json().dump(), one_exact.json().dump()) << where << ", exact";
        const Report many = check_in(r, threads, true);
        EXPECT_EQ(many.passed, one.passed) << where;
        std::vector<double> p99_many;
        EXPECT_EQ(without_p99(many.json(), &p99_many).dump(), json_one) << where;
        ASSERT_EQ(p99_many.size(), p99_one.size()) << where;
        // |x| <= 1: an |err| estimate lies within (|x_a| + |x_b|)·2^-46 <= 2^-45 of its exact error.
        for (std::size_t k = 0; k < p99_one.size(); k += 2)
          EXPECT_NEAR(p99_many[k], p99_one[k], 0x1p-45) << where << " percentile " << k;
      }
    }
  }
}

// check_rope with presumed floors from every size on (rope_screen.h's tuning) and the same without, on the
// same number of threads.
Report presumed(const RopeRequest& r, std::size_t threads, double share) {
  const harness::PresumeTuning before = harness::rope_screen_tuning();
  harness::tune_rope_screen({0, share});
  Report out = check_in(r, threads, true);
  harness::tune_rope_screen(before);
  return out;
}
Report unpresumed(const RopeRequest& r, std::size_t threads) {
  const harness::PresumeTuning before = harness::rope_screen_tuning();
  harness::tune_rope_screen({SIZE_MAX, 0.02});
  Report out = check_in(r, threads, true);
  harness::tune_rope_screen(before);
  return out;
}

// Presumed floors change nothing of the report, its percentiles included, on one thread or several: where
// they hold (share 0.02: at least 1.2% of the sample above them, the whole batch being sampled here) and
// where they do not (share 0.001: 0.1% above them, under the 1% a 99th percentile needs), the pass then
// measured again without them, once whatever the threads (the merged parts are judged whole).
TEST(RopeThreads, PresumedFloorsGiveTheReportWithout) {
  std::mt19937_64 g(20261206);
  for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
    for (const Case& c : cases()) {
      const Built b(c, type, g);
      const RopeRequest& r = b.r;
      for (const std::size_t threads : {1, 2, 7}) {
        const std::string what =
            std::string(to_string(type)) + " " + c.name + ", " + std::to_string(threads) + " threads";
        const std::string plain = unpresumed(r, threads).json().dump();
        const std::size_t reruns = harness::rope_screen_reruns();
        EXPECT_EQ(presumed(r, threads, 0.02).json().dump(), plain) << what << ", held";
        if (c.name == "passing") {
          EXPECT_EQ(harness::rope_screen_reruns(), reruns) << what;
        }
        EXPECT_EQ(presumed(r, threads, 0.001).json().dump(), plain) << what << ", failed";
        if (c.name == "passing") {
          EXPECT_EQ(harness::rope_screen_reruns(), reruns + 1) << what;
        }
      }
    }
  }
}

// A sample that misjudges the tail: the rows presumed_rope_floors samples (512 of 2048: the r-th has token
// 2r, head r mod 2) err a float32 ulp more than the others, so the level 1.2% of the sample exceeds lies
// above all but about 1.2% of those rows' errors, a quarter of that (0.3%) of the whole batch's: the
// presumption fails, the pass runs again, and the report is the one without presuming.
TEST(RopeThreads, ASampleThatMisjudgesTheTailRunsThePassAgain) {
  const std::size_t tokens = 1024, heads = 2, hd = 64;
  std::mt19937_64 g(20261207);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = static_cast<std::int64_t>(t);
  const RopeBatch batch = rope_batch_of({tokens, heads, hd}, positions, false, "x");
  harness::TypedBuffer x(DType::F32, tokens * heads * hd), y(DType::F32, x.size());
  std::vector<double> xd(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x.set(i, unit(g)), xd[i] = x.get(i);
  const std::vector<double> golden = golden_rope({64, 0, 1e4, Layout::HalfSplit}, batch, xd, DType::F32);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t t = i / (heads * hd), h = i / hd % heads;
    const bool sampled = t % 2 == 0 && h == t / 2 % 2;
    const auto f = static_cast<float>(golden[i]);
    y.set(i, sampled ? std::nextafter(f, f < 0 ? -INFINITY : INFINITY) : f);
  }
  RopeRequest r;
  r.positions.values = positions;
  r.x = {{}, {tokens, heads, hd}, DType::F32, "x", x.view().data};
  r.y = {{}, {tokens, heads, hd}, DType::F32, "y", y.view().data};
  for (const std::size_t threads : {1, 2, 3}) {
    const std::string what = std::to_string(threads) + " threads";
    const std::string plain = unpresumed(r, threads).json().dump();
    const std::size_t reruns = harness::rope_screen_reruns();
    EXPECT_EQ(presumed(r, threads, 0.02).json().dump(), plain) << what;
    EXPECT_EQ(harness::rope_screen_reruns(), reruns + 1) << what;
  }
}

// A sampled band's presumed floors are guessed from its sample's tokens (rope_pass.cc's percentile_rows, the
// population presumptions_held counts). Here the tokens in the sample are rotated in double and rounded once
// (within about half an ulp), the others as HF's rotate_half in float32 arithmetic (float32 angles: up to
// ~3e-5 off at position 511, within the float32 class's budget): the level 2% of all tokens' estimates exceed
// lies above every sampled token's error, so a guess from every token would not hold and the pass would run
// again. 512 tokens x 32 heads x 128 at positions 0..511 (2^21 elements in 512 rows, one band: sampled).
TEST(RopeThreads, ASampledBandsFloorsAreGuessedFromItsSample) {
  const std::size_t tokens = 512, heads = 32, hd = 128, half = hd / 2;
  std::mt19937_64 g(20261208);
  std::uniform_real_distribution<float> unit(-1.0F, 1.0F);
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = static_cast<std::int64_t>(t);
  harness::Measurement probe;
  probe.sample_percentiles(1, 0, 0);
  harness::TypedBuffer x(DType::F32, tokens * heads * hd), y(DType::F32, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x.set(i, unit(g));
  for (std::size_t t = 0; t < tokens; ++t) {
    const bool in = probe.sampled_row(static_cast<std::int64_t>(t));
    for (std::size_t j = 0; j < half; ++j) {
      const float inv_freq = 1.0F / std::pow(10000.0F, static_cast<float>(2 * j) / static_cast<float>(hd));
      const float angle = static_cast<float>(t) * inv_freq, c = std::cos(angle), s = std::sin(angle);
      const double exact = static_cast<double>(t) * std::pow(1e4, -static_cast<double>(2 * j) / hd);
      const double cd = std::cos(exact), sd = std::sin(exact);
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t row = (t * heads + h) * hd;
        const auto a = static_cast<float>(x.get(row + j)), b = static_cast<float>(x.get(row + j + half));
        y.set(row + j, in ? static_cast<float>(a * cd - b * sd) : a * c - b * s);
        y.set(row + j + half, in ? static_cast<float>(b * cd + a * sd) : b * c + a * s);
      }
    }
  }
  RopeRequest r;
  r.positions.values = positions;
  r.x = {{}, {tokens, heads, hd}, DType::F32, "x", x.view().data};
  r.y = {{}, {tokens, heads, hd}, DType::F32, "y", y.view().data};
  const Report plain = unpresumed(r, 1);
  ASSERT_TRUE(plain.passed);
  const nlohmann::json band = plain.json()["bands"][0];
  EXPECT_LT(band["p99_samples"].get<std::size_t>(), band["samples"].get<std::size_t>() / 4);
  const std::size_t reruns = harness::rope_screen_reruns();
  EXPECT_EQ(presumed(r, 1, 0.02).json().dump(), plain.json().dump());
  EXPECT_EQ(harness::rope_screen_reruns(), reruns);
}

}  // namespace
}  // namespace pe::check
