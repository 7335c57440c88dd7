// RoPE's rows in vectors: every target's rotation and metrics are the scalar reference's bit for bit
// (ref::Rope::fast_rotate_by, ref::abs_error, ref::in_ulps), and measure_rope_rows gives the same rows with
// the vector path as without it, over layouts, partial and offset rotary, M-RoPE, YaRN's attention factor,
// both directions, every output type, and rows the vector path must leave to the scalar one (huge inputs,
// angles beyond the fast path's reach, NaN and infinite outputs).
#include "pe/harness/rope_rows_vector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "pe/harness/measure.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/reference.h"

namespace pe::harness {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Inputs of every kind the metrics branch on: ordinary floats, signed zeros, subnormal doubles, powers of
// two, large values still below the vector path's 2^900 limit.
double draw_input(std::mt19937_64& g) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  switch (g() % 8) {
    case 0:
      return 0.0;
    case 1:
      return -0.0;
    case 2:
      return std::ldexp(unit(g), -1060);  // subnormal
    case 3:
      return std::ldexp(1.0, static_cast<int>(g() % 40) - 20) * (g() % 2 == 0 ? 1 : -1);
    case 4:
      return std::ldexp(unit(g), 880);
    default:
      return static_cast<float>(unit(g) * 4);
  }
}

TEST(RopeRowsVector, EveryTargetIsRegistered) {
  EXPECT_FALSE(rotation_targets().empty()) << "no Highway target with a fused multiply-add on this CPU";
  for (const RotationTarget& t : rotation_targets()) std::printf("rotation target %s\n", t.name.c_str());
}

TEST(RopeRowsVector, EveryTargetIsTheScalarRotationBitForBit) {
  RopeScaling yarn;
  yarn.type = RopeScalingType::Yarn;
  yarn.factor = 8;
  yarn.original_max_position = 4096;
  const std::size_t n = 37;  // a tail shorter than any vector
  const std::size_t padded = RotationLanes::padded(n);
  std::mt19937_64 g(20261202);
  for (const bool scaled : {false, true}) {
    const ref::Rope r(RopeParams{128, 0, 5e5, Layout::HalfSplit, scaled ? yarn : RopeScaling{}}, 1 << 20);
    ASSERT_EQ(r.fast_attention() != nullptr, scaled);
    for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
      for (const RopeDirection dir : {RopeDirection::Forward, RopeDirection::Inverse}) {
        std::vector<ref::FastSinCos> sc(n);
        std::vector<double> a(padded), b(padded), y0(padded), y1(padded);
        for (std::size_t k = 0; k < n; ++k) {
          if (k % 9 == 4) {  // hand-made: cos a power of two with a low part of the other sign
            sc[k] = {{0, 0}, {1, -0x1p-60}, 0};
          } else {
            const auto s = r.fast_sincos(static_cast<std::int64_t>(g() % (1 << 20)), k % 64);
            ASSERT_TRUE(s);
            sc[k] = *s;
          }
          a[k] = draw_input(g), b[k] = draw_input(g);
          const auto exact = r.fast_rotate_by(sc[k], a[k], b[k], dir);
          ASSERT_TRUE(exact);
          const double noise = std::ldexp(static_cast<double>(g() % 5) - 2, -24);
          y0[k] = ref::round_double_to(exact->first.value.hi * (1 + noise), type);
          y1[k] = k % 11 == 3   ? NAN
                  : k % 13 == 5 ? INFINITY
                                : ref::round_double_to(exact->second.value.hi, type);
        }
        std::vector<double> sh(padded), sl(padded), ch(padded), cl(padded);
        for (std::size_t k = 0; k < n; ++k) {
          const ref::dd::DD s = dir == RopeDirection::Inverse ? ref::dd::neg(sc[k].sin) : sc[k].sin;
          sh[k] = s.hi, sl[k] = s.lo, ch[k] = sc[k].cos.hi, cl[k] = sc[k].cos.lo;
        }
        for (const RotationTarget& t : rotation_targets()) {
          std::vector<double> e0(padded), e1(padded), r0(padded), r1(padded), u0(padded), u1(padded);
          const RotationLanes lanes{sh.data(), sl.data(), ch.data(), cl.data(), a.data(),
                                    b.data(),  y0.data(), y1.data(), e0.data(), e1.data(),
                                    r0.data(), r1.data(), u0.data(), u1.data()};
          const ref::FormatBits f = ref::format_bits(type);
          ASSERT_TRUE(t.run(lanes, n, r.fast_attention(), f.precision, f.emin));
          for (std::size_t k = 0; k < n; ++k) {
            const auto exact = r.fast_rotate_by(sc[k], a[k], b[k], dir);
            const ref::dd::DD v[2] = {exact->first.value, exact->second.value};
            const double y[2] = {y0[k], y1[k]}, got_e[2] = {e0[k], e1[k]}, got_err[2] = {r0[k], r1[k]},
                         got_ulp[2] = {u0[k], u1[k]};
            for (int o = 0; o < 2; ++o) {
              const double err = ref::abs_error(y[o], v[o]);
              const std::string where = t.name + " " + std::string(to_string(type)) + " pair " +
                                        std::to_string(k) + " output " + std::to_string(o) +
                                        (scaled ? " scaled" : "");
              EXPECT_TRUE(same_bits(got_e[o], v[o].hi)) << where;
              EXPECT_TRUE(same_bits(got_err[o], err)) << where;
              EXPECT_TRUE(same_bits(got_ulp[o], ref::in_ulps(err, v[o], type))) << where;
            }
          }
          // A pair beyond 2^900 is the scalar path's (fast_rotate_by declines it), and so is a NaN input.
          for (const double big : {0x1p900, static_cast<double>(NAN)}) {
            std::vector<double> a2 = a;
            a2[n - 1] = big;
            RotationLanes l2 = lanes;
            l2.xa = a2.data();
            EXPECT_FALSE(t.run(l2, n, r.fast_attention(), f.precision, f.emin)) << t.name << " " << big;
          }
        }
      }
    }
  }
}

void expect_same_rows(const std::vector<RopeRow>& a, const std::vector<RopeRow>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size()) << what;
    for (std::size_t i = 0; i < a[r].size(); ++i) {
      const ElementRecord x = a[r].record(i), y = b[r].record(i);
      const std::string where = what + ": row " + std::to_string(x.row) + " head " + std::to_string(x.head) +
                                " element " + std::to_string(i);
      EXPECT_EQ(x.position, y.position) << where;
      EXPECT_EQ(x.channel, y.channel) << where;
      EXPECT_EQ(x.pair, y.pair) << where;
      EXPECT_EQ(x.unchanged, y.unchanged) << where;
      for (const auto& [u, v, name] : {std::tuple{x.y, y.y, "y"},
                                       {x.exact, y.exact, "exact"},
                                       {x.abs_error, y.abs_error, "abs_error"},
                                       {x.ulp, y.ulp, "ulp"},
                                       {x.budget, y.budget, "budget"},
                                       {x.abs_phi, y.abs_phi, "abs_phi"},
                                       {x.scale, y.scale, "scale"},
                                       {x.gain, y.gain, "gain"},
                                       {x.gain_extra, y.gain_extra, "gain_extra"}})
        EXPECT_TRUE(same_bits(u, v)) << where << " " << name << ": " << u << " vs " << v;
    }
  }
}

TEST(RopeRowsVector, MeasureRopeRowsIsTheScalarLoopBitForBit) {
  ASSERT_TRUE(vector_rows_enabled());
  RopeScaling yarn;
  yarn.type = RopeScalingType::Yarn;
  yarn.factor = 4;
  yarn.original_max_position = 512;
  RopeParams mrope{128, 0, 1e6, Layout::HalfSplit};
  mrope.form.mrope_section = {16, 24, 24};
  RopeParams offset{96, 32, 1e4, Layout::Interleaved};
  offset.rotary_offset = 64;
  const std::vector<std::pair<RopeParams, std::string>> cases = {
      {{64, 0, 1e4, Layout::HalfSplit}, "halfsplit"},
      {{64, 48, 1e4, Layout::Interleaved}, "interleaved, partial"},
      {{64, 0, 1e4, Layout::Deinterleave}, "deinterleave"},
      {{64, 0, 1e4, Layout::HalfSplit, yarn}, "yarn"},
      {offset, "rotary offset"},
      {mrope, "M-RoPE"}};
  std::mt19937_64 g(20261203);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const auto& [params, name] : cases) {
    const RopePlan plan(params);
    const std::size_t axes = n_axes(params.form), heads = 3, tokens = 9;
    const auto hd = static_cast<std::size_t>(params.head_dim);
    std::vector<std::int64_t> positions(axes * tokens);
    for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<std::int64_t>(g() % 100000);
    if (axes == 1) positions[tokens - 1] = (std::int64_t{1} << 52) + 5;  // beyond the fast path's angles
    std::vector<double> x(tokens * heads * hd), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(unit(g));
      y[i] = static_cast<float>(x[i] + unit(g) * 1e-6);
    }
    x[4 * hd + 1] = 1e300;  // a row the vector path leaves to the scalar loop
    y[7 * hd + 2] = NAN;
    y[8 * hd + 3] = -INFINITY;
    RopeBatch batch = RopeBatch::tokens_first(positions, heads, hd);
    batch.n_axes = axes;
    for (const DType type : {DType::F32, DType::BF16, DType::F16, DType::F64}) {
      for (const RopeDirection dir : {RopeDirection::Forward, RopeDirection::Inverse}) {
        const Budget budget{nullptr, type, 1e-6};
        std::vector<RopeRow> vec, scalar;
        measure_rope_rows(
            params, batch, x, y, budget, [&](const RopeRow& r) { vec.push_back(r); }, {}, dir);
        set_vector_rows(false);
        measure_rope_rows(
            params, batch, x, y, budget, [&](const RopeRow& r) { scalar.push_back(r); }, {}, dir);
        set_vector_rows(true);
        expect_same_rows(vec, scalar,
                         name + " " + std::string(to_string(type)) +
                             (dir == RopeDirection::Inverse ? " inverse" : " forward"));
      }
    }
  }
}

}  // namespace
}  // namespace pe::harness
