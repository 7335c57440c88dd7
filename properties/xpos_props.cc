// xPos (pe/xpos.h): the exact gain against its closed form in long double, the product of a query's and a
// key's gains against ζ^((m − n)/scale_base) (the decay depends on the distance alone), flash-attention's
// float32 computation (written here from its RotaryEmbedding: the gain folded into cos and sin, the tables
// rounded into the data type, the rotation in float32) within xpos_relative_error's model under the
// torch formulations' contracts, the other sign's gain caught, and validation.

#include <cmath>
#include <limits>

#include "pe/ref/temperature.h"
#include "pe/ref/xpos.h"
#include "pe/xpos.h"
#include "support/property_util.h"

namespace pe {
// RapidCheck's printer for a counterexample's XPos (found by argument-dependent lookup).
inline void showValue(const XPos& x, std::ostream& os) {
  os << "scale_base " << x.scale_base << ", centre " << x.centre << (x.keys ? ", k" : ", q");
}
}  // namespace pe

namespace pe::testing {
namespace {

// scale_base as the engines default it (512) or any in [16, 4096]; a centre in [0, 2^20]; q or k.
rc::Gen<XPos> gen_xpos() {
  return rc::gen::exec([] {
    XPos x;
    x.scale_base =
        *rc::gen::oneOf(rc::gen::just(512.0), rc::gen::map(rc::gen::inRange(16, 4097),
                                                           [](int s) { return static_cast<double>(s); }))
             .as("scale_base");
    x.centre = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 20).as("centre");
    x.keys = *rc::gen::arbitrary<bool>().as("keys");
    return x;
  });
}

// A position with |w| <= max_w where the gain grows (p before the centre for q, after it for k) and <=
// shrink_w where it shrinks, at least 0: float32 holds ζ_0^±30; float16 (65504) ζ_0^-5 times 16, and its
// gain's tables go subnormal from ζ_0^11 on (shrink_w 16 reaches them).
std::int64_t gen_position(const XPos& x, double max_w = 30, double shrink_w = 30) {
  const double before = x.keys ? shrink_w : max_w, after = x.keys ? max_w : shrink_w;
  const auto lo = x.centre - static_cast<std::int64_t>(before * x.scale_base);
  const auto hi = x.centre + static_cast<std::int64_t>(after * x.scale_base);
  return *rc::gen::inRange<std::int64_t>(std::max<std::int64_t>(0, lo), hi + 1).as("position");
}

TEST(XPosProps, ExactGainEqualsTheClosedForm) {
  PE_RC_CHECK("|g_exact - powl((2j + 0.4d)/(1.4d), ±(p - c)/s)| <= 64·(1 + |w|)·2^-64·g", [] {
    const XPos x = *gen_xpos();
    const std::int64_t d = 2 * *rc::gen::inRange<std::int64_t>(1, 257).as("rotary_dim / 2");
    const std::int64_t j = *rc::gen::inRange<std::int64_t>(0, d / 2).as("pair");
    const std::int64_t p = gen_position(x);
    const long double w = (x.keys ? -1.0L : 1.0L) * static_cast<long double>(p - x.centre) / x.scale_base;
    const long double closed =
        std::pow((2.0L * static_cast<long double>(j) + 0.4L * static_cast<long double>(d)) /
                     (1.4L * static_cast<long double>(d)),
                 w);
    const ref::Enclosure exact = ref::XPosGain(x, d).exact(p, j);
    const ref::Real err = abs(exact.value - ref::Real(closed));
    const ref::Real bound = ref::Real(64 * (1 + std::fabs(static_cast<double>(w))) * 0x1p-64) * exact.value;
    if (!(err <= bound))
      RC_FAIL(fmt::format("w={}: exact {:.20g}, closed form {:.20Lg}", static_cast<double>(w),
                          exact.value.convert_to<double>(), closed));
  });
}

TEST(XPosProps, QueryTimesKeyGainDependsOnTheDistanceAlone) {
  PE_RC_CHECK("g_q(m)·g_k(n) = ζ_j^((m - n)/s) for every centre", [] {
    XPos q = *gen_xpos();
    q.keys = false;
    XPos k = q;
    k.keys = true;
    const std::int64_t d = 2 * *rc::gen::inRange<std::int64_t>(1, 257).as("rotary_dim / 2");
    const std::int64_t j = *rc::gen::inRange<std::int64_t>(0, d / 2).as("pair");
    const std::int64_t m = gen_position(q), n = gen_position(q);
    const ref::Enclosure product =
        ref::times(ref::XPosGain(q, d).exact(m, j), ref::XPosGain(k, d).exact(n, j));
    // The distance's gain from its own formula: ζ as 2j/(1.4d) + 0.4/1.4, the power by pow.
    const ref::Real zeta = ref::Real(20 * j) / ref::Real(14 * d) + ref::Real(4) / ref::Real(14);
    const ref::Real distance = pow(zeta, ref::Real(m - n) / ref::Real(q.scale_base));
    RC_ASSERT(abs(product.value - distance) <= product.radius + distance * ldexp(ref::Real(1), -300));
  });
}

// v rounded into `type` (exactly a float for each type here).
float into_type(DType type, float v) {
  TypedBuffer b(type, 1);
  b.set(0, v);
  return static_cast<float>(b.get(0));
}

// flash-attention's RotaryEmbedding with scale_base, as published (layers/rotary.py): inv_freq, t, the
// scale and the power in float32; cos and sin of fl(t·inv_freq) in float32, times the gain (divided for k)
// in float32, rounded into the data type; the rotation in float32 from the data type, rounded into it.
std::vector<double> flash_xpos(const std::vector<double>& x, const std::vector<std::int64_t>& positions,
                               std::int64_t heads, std::int64_t d, Layout layout, const XPos& xp,
                               DType type) {
  std::vector<double> y = x;
  const auto half = static_cast<std::size_t>(d / 2);
  for (std::size_t t = 0; t < positions.size(); ++t) {
    const auto tf = static_cast<float>(positions[t]);
    const float power = (tf - static_cast<float>(xp.centre)) / static_cast<float>(xp.scale_base);
    for (std::size_t j = 0; j < half; ++j) {
      const float e = static_cast<float>(2 * j) / static_cast<float>(d);
      const float inv_freq = 1.0f / std::pow(10000.0f, e);
      const float freq = tf * inv_freq;
      const float scale = (static_cast<float>(2 * j) + static_cast<float>(0.4 * static_cast<double>(d))) /
                          static_cast<float>(1.4 * static_cast<double>(d));
      const float g = std::pow(scale, power);
      const float c = into_type(type, xp.keys ? std::cos(freq) / g : std::cos(freq) * g);
      const float s = into_type(type, xp.keys ? std::sin(freq) / g : std::sin(freq) * g);
      const std::size_t a = layout == Layout::HalfSplit ? j : 2 * j,
                        b = layout == Layout::HalfSplit ? j + half : a + 1;
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::size_t row =
            (t * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)) * static_cast<std::size_t>(d);
        const auto xa = static_cast<float>(x[row + a]), xb = static_cast<float>(x[row + b]);
        y[row + a] = into_type(type, xa * c - xb * s);
        y[row + b] = into_type(type, xb * c + xa * s);
      }
    }
  }
  return y;
}

harness::OutputGain xpos_gain(const XPos& x, DType type) {
  return {{}, xpos_relative_error(type), gain_floor(type), x, kXPosPerExponent, xpos_table_floor(type)};
}

struct FlashCase {
  RopeParams params;
  std::vector<std::int64_t> positions;
  std::int64_t heads;
  std::vector<double> x, y;
};

FlashCase gen_flash_case(const Instance& in, const XPos& xp) {
  FlashCase c;
  const std::int64_t d = 2 * *rc::gen::inRange<std::int64_t>(1, 65).as("head_dim / 2");
  c.params = RopeParams{d, d, 10000.0, in.layout};
  c.heads = *rc::gen::inRange<std::int64_t>(1, 4).as("heads");
  const bool f16 = in.dtype == DType::F16;
  for (int i = 0; i < 6; ++i)
    c.positions.push_back(
        std::min(gen_position(xp, f16 ? 5 : 30, f16 ? 16 : 30), in.contract().max_position));
  c.x = seeded_inputs(in.dtype, c.positions.size() * static_cast<std::size_t>(c.heads * d),
                      *rc::gen::arbitrary<std::uint64_t>().as("input seed"));
  c.y = flash_xpos(c.x, c.positions, c.heads, d, in.layout, xp, in.dtype);
  return c;
}

std::vector<Instance> torch_formulations() {
  std::vector<Instance> out;
  for (const Instance& in : selected(Family::Rope)) {
    const std::string name(in.variant->name());
    if ((name == "rope.torch_f32" || name == "rope.torch_bf16" || name == "rope.torch_f16") &&
        in.layout != Layout::Deinterleave)
      out.push_back(in);
  }
  return out;
}

TEST(XPosProps, FlashAttentionsFloat32GainWithinItsErrorModel) {
  const std::vector<Instance> instances = torch_formulations();
  if (instances.empty()) GTEST_SKIP() << "no rope.torch_* variant here (an outside suite's own registry)";
  for (const Instance& in : instances) {
    PE_RC_CHECK(
        in.name() + ": flash-attention's xPos passes under the torch contract and the gain's model", [&] {
          const XPos xp = *gen_xpos();
          const FlashCase c = gen_flash_case(in, xp);
          const RopeBatch batch = RopeBatch::tokens_first(c.positions, static_cast<std::size_t>(c.heads),
                                                          static_cast<std::size_t>(c.params.head_dim));
          harness::measure_rope(c.params, batch, c.x, c.y, {&in.contract(), in.dtype}, fail_over_budget(), {},
                                RopeDirection::Forward, xpos_gain(xp, in.dtype));
        });
  }
}

TEST(XPosProps, TheOtherSignsGainFails) {
  const std::vector<Instance> instances = torch_formulations();
  if (instances.empty()) GTEST_SKIP() << "no rope.torch_* variant here (an outside suite's own registry)";
  const Instance& in = instances.front();
  PE_RC_CHECK(in.name() + ": q's data checked as k (and the reverse) has an element over budget", [&] {
    const XPos xp = *gen_xpos();
    const FlashCase c = gen_flash_case(in, xp);
    bool gained = false;  // |w| >= 1/16 somewhere: ζ_0^(2w) is then 15% off 1
    for (const std::int64_t p : c.positions) gained = gained || std::fabs(xpos_exponent(xp, p)) >= 1.0 / 16;
    RC_PRE(gained);
    XPos other = xp;
    other.keys = !xp.keys;
    std::size_t over = 0;
    const RopeBatch batch = RopeBatch::tokens_first(c.positions, static_cast<std::size_t>(c.heads),
                                                    static_cast<std::size_t>(c.params.head_dim));
    harness::measure_rope(
        c.params, batch, c.x, c.y, {&in.contract(), in.dtype},
        [&](const harness::ElementRecord& e) { over += e.ratio() > 1 ? 1 : 0; }, {}, RopeDirection::Forward,
        xpos_gain(other, in.dtype));
    RC_ASSERT(over > 0);
  });
}

TEST(XPosProps, ValidationNamesTheParameterAndItsValue) {
  for (const double bad :
       {-512.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    try {
      validate(XPos{bad, 0, false});
      ADD_FAILURE() << "no InvalidArgument for xpos_scale_base " << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.parameter(), "xpos_scale_base");
      EXPECT_NE(std::string(e.what()).find(fmt::format("got {}", bad)), std::string::npos) << e.what();
    }
  }
  try {
    validate(XPos{512, -1, false});
    ADD_FAILURE() << "no InvalidArgument for xpos_centre -1";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "xpos_centre");
    EXPECT_NE(std::string(e.what()).find("got -1"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(validate(XPos{}));  // 0: no xPos
}

}  // namespace
}  // namespace pe::testing
