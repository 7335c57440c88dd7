// Attention temperature (pe/attn_temperature.h): the step function's shape, its value against the
// MPFR closed form at every step and its neighbours (positions up to 2^31), the gain's error model
// (gain_relative_error) against a variant's rotation scaled the ways HF scales q, and validation.

#include <limits>

#include "pe/attn_temperature.h"
#include "pe/ref/temperature.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

constexpr std::int64_t kMaxPosition31 = std::int64_t{1} << 31;

// Periods with many steps below 2^31 (1, small, HF's 8192 and Ministral 3's 16384, odd ones) and
// scales from 0 to 2 in thousandths (0.1 is the published value).
rc::Gen<AttnTemperature> gen_temperature() {
  return rc::gen::exec([] {
    AttnTemperature t;
    t.type = *rc::gen::element(AttnTemperatureType::Llama4, AttnTemperatureType::Mistral).as("type");
    const std::int64_t period = *rc::gen::oneOf(rc::gen::element<std::int64_t>(1, 2, 3, 8192, 16384),
                                                rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 20))
                                     .as("period");
    const double scale = *rc::gen::oneOf(rc::gen::just(0.1), rc::gen::map(rc::gen::inRange(0, 2001),
                                                                          [](int m) { return m / 1000.0; }))
                              .as("scale");
    if (t.type == AttnTemperatureType::Llama4) {
      t.floor_scale = period;
      t.attn_scale = scale;
    } else {
      t.original_max_position = period;
      t.beta = scale;
    }
    return t;
  });
}

// A step k >= 1 whose first position is at most 2^31, and a position within one of it.
std::int64_t gen_near_boundary(const TemperatureSteps& s) {
  const std::int64_t last_k = (kMaxPosition31 + s.offset) / s.period;
  const std::int64_t k = *rc::gen::inRange<std::int64_t>(1, last_k + 1).as("step k");
  const std::int64_t d = *rc::gen::inRange<std::int64_t>(-1, 2).as("offset from the step");
  return std::clamp<std::int64_t>(temperature_boundary(s, k) + d, 0, kMaxPosition31);
}

TEST(TemperatureProps, OneBelowTheFirstStep) {
  PE_RC_CHECK("t(p) = 1 exactly for p below the first step", [] {
    const AttnTemperature spec = *gen_temperature();
    const TemperatureSteps s = validate(spec);
    const std::int64_t first = temperature_boundary(s, 1);
    if (first == 0) return;  // llama4 with floor_scale 1 steps at p = 0: no position below
    const std::int64_t p = *rc::gen::inRange<std::int64_t>(0, first).as("position");
    RC_ASSERT(attn_temperature(s, p) == 1.0);
    const ref::Enclosure exact = ref::Temperature(spec).exact(p);
    RC_ASSERT(exact.value == 1);
    RC_ASSERT(exact.radius == 0);
  });
}

TEST(TemperatureProps, ConstantBetweenStepsAndChangingAtThem) {
  PE_RC_CHECK("t is one value on [boundary(k), boundary(k+1)) and another from boundary(k+1)", [] {
    const AttnTemperature spec = *gen_temperature();
    const TemperatureSteps s = validate(spec);
    const std::int64_t k = *rc::gen::inRange<std::int64_t>(0, (kMaxPosition31 + s.offset) / s.period).as("k");
    const std::int64_t lo = temperature_boundary(s, k), next = temperature_boundary(s, k + 1);
    const std::int64_t a = *rc::gen::inRange(lo, next).as("p"), b = *rc::gen::inRange(lo, next).as("q");
    RC_ASSERT(attn_temperature(s, a) == attn_temperature(s, b));
    RC_ASSERT(attn_temperature(s, lo) == attn_temperature(s, next - 1));
    if (s.scale > 0) RC_ASSERT(attn_temperature(s, next) > attn_temperature(s, next - 1));
  });
}

TEST(TemperatureProps, NonDecreasing) {
  PE_RC_CHECK("p <= q implies t(p) <= t(q)", [] {
    const TemperatureSteps s = validate(*gen_temperature());
    const std::int64_t p = *rc::gen::inRange<std::int64_t>(0, kMaxPosition31 + 1).as("p");
    const std::int64_t q = *rc::gen::inRange<std::int64_t>(p, kMaxPosition31 + 1).as("q >= p");
    RC_ASSERT(attn_temperature(s, p) <= attn_temperature(s, q));
    // The step index, written here from each definition: ⌊(p + 1)/F⌋ (llama4), ⌊p/L⌋ (mistral).
    RC_ASSERT(temperature_step(s, p) == (p + s.offset) / s.period);
  });
}

TEST(TemperatureProps, EqualsTheClosedFormAtEveryStepAndItsNeighbours) {
  PE_RC_CHECK("|t(p) - (1 + s ln(1 + k))| <= kTemperatureError·t at boundary(k) - 1, boundary(k), + 1", [] {
    const AttnTemperature spec = *gen_temperature();
    const TemperatureSteps s = validate(spec);
    const std::int64_t p = gen_near_boundary(s);
    const ref::Enclosure exact = ref::Temperature(spec).exact(p);
    const double got = attn_temperature(s, p);
    const double err = ref::abs_error(got, exact.value);
    const double bound = kTemperatureError * exact.value.convert_to<double>();
    RC_CLASSIFY(temperature_step(s, p) == temperature_step(s, std::max<std::int64_t>(p - 1, 0)),
                "inside a step");
    if (!(err <= bound)) RC_FAIL(fmt::format("p={}: t={:.17g}, error {:.3g} > {:.3g}", p, got, err, bound));
  });
}

// q·t(p) as HF computes it: t in float32 (log, product, sum), then Llama-4 multiplies in float32 and
// rounds into q's type, Ministral 3 first rounds t into q's type. The bound under test is
// gain_relative_error, the one `check` uses.
double hf_gain(const TemperatureSteps& s, std::int64_t p) {
  const auto k = static_cast<float>(temperature_step(s, p));
  return static_cast<double>(std::log(k + 1.0f) * static_cast<float>(s.scale) + 1.0f);
}

double round_into(DType type, double v) {
  TypedBuffer b(type, 1);
  b.set(0, v);
  return b.get(0);
}

double gained(DType type, double y, double gain, bool gain_in_type) {
  const double g = gain_in_type ? round_into(type, gain) : gain;
  if (type == DType::F64) return y * g;
  return round_into(type, static_cast<double>(static_cast<float>(y) * static_cast<float>(g)));
}

TEST(TemperatureProps, GainWithinItsErrorModel) {
  for (const Instance& in : selected(Family::Rope)) {
    if (in.variant->name() != "rope.scalar_f32" || in.layout != Layout::HalfSplit) continue;
    PE_RC_CHECK(in.name() + ": HF-style t(p)·R(p)·x and t(p)·x within the gain's budget", [&] {
      const AttnTemperature spec = *gen_temperature();
      const TemperatureSteps s = validate(spec);
      const bool gain_in_type = *rc::gen::arbitrary<bool>().as("gain rounded into q's type (Ministral 3)");
      const bool nope = *rc::gen::arbitrary<bool>().as("NoPE layer");
      std::vector<std::int64_t> positions;
      for (int i = 0; i < 4; ++i) {
        positions.push_back(std::min(gen_near_boundary(s), in.contract().max_position));
      }
      const std::int64_t head_dim = 16;
      const RopeParams params{head_dim, head_dim, 10000.0, in.layout};
      const std::vector<double> x = seeded_inputs(in.dtype, positions.size() * head_dim,
                                                  *rc::gen::arbitrary<std::uint64_t>().as("input seed"));
      TypedBuffer y = buffer_of(in.dtype, x);
      if (!nope) run_rope(in, RopePlan(params), positions, 1, y);
      std::vector<double> out = y.values();
      for (std::size_t t = 0; t < positions.size(); ++t) {
        for (std::int64_t c = 0; c < head_dim; ++c) {
          double& v = out[t * head_dim + static_cast<std::size_t>(c)];
          v = gained(in.dtype, v, hf_gain(s, positions[t]), gain_in_type);
        }
      }
      const harness::OutputGain gain{spec, gain_relative_error(in.dtype), gain_floor(in.dtype)};
      const RopeBatch batch = RopeBatch::tokens_first(positions, 1, head_dim);
      if (nope) {
        harness::measure_nope(batch, head_dim, x, out, {nullptr, in.dtype}, fail_over_budget(), gain);
      } else {
        harness::measure_rope(params, batch, x, out, {&in.contract(), in.dtype}, fail_over_budget(), {},
                              RopeDirection::Forward, gain);
      }
    });
  }
}

TEST(TemperatureProps, ValidationNamesTheParameterAndItsValue) {
  PE_RC_CHECK("an invalid parameter throws InvalidArgument naming it and its value", [] {
    AttnTemperature t;
    t.type = *rc::gen::element(AttnTemperatureType::Llama4, AttnTemperatureType::Mistral).as("type");
    t.original_max_position = 16384;
    const bool bad_scale = *rc::gen::arbitrary<bool>().as("bad scale (else bad period)");
    std::string parameter, value;
    if (bad_scale) {
      const double v =
          *rc::gen::element(-0.1, -1e300, std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity())
               .as("scale");
      (t.type == AttnTemperatureType::Llama4 ? t.attn_scale : t.beta) = v;
      parameter = t.type == AttnTemperatureType::Llama4 ? "attn_scale" : "beta";
      value = fmt::format("{}", v);
    } else {
      const std::int64_t v = *rc::gen::inRange<std::int64_t>(-(std::int64_t{1} << 40), 1).as("period <= 0");
      (t.type == AttnTemperatureType::Llama4 ? t.floor_scale : t.original_max_position) = v;
      parameter = t.type == AttnTemperatureType::Llama4 ? "floor_scale" : "original_max_position";
      value = std::to_string(v);
    }
    try {
      validate(t);
      RC_FAIL("no InvalidArgument for " + parameter + " = " + value);
    } catch (const InvalidArgument& e) {
      RC_ASSERT(e.parameter() == parameter);
      RC_ASSERT(std::string(e.what()).find("got " + value) != std::string::npos);
    }
  });
}

}  // namespace
}  // namespace pe::testing
