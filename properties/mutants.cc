// Deliberately broken variants, linked only into pe_props_mutants. Each is the bug a real kernel
// has shipped with; ctest runs the property that must catch it and passes only if RapidCheck
// reports a shrunk counterexample (CMakeLists.txt lists which property catches which mutant).
#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "detail/framework_sincos.h"
#include "detail/rotation16.h"
#include "detail/scalar_sincos.h"
#include "pe/detail/loops.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/variant.h"
#include "rope/framework/rotation16_contract.h"

namespace pe {
namespace {

// The contracts of scalar_f64 kernels (float64 angle and arithmetic), which the mutants claim. The table
// mutants are bugs of the paper's integer table: their contract takes that table only (as a C plugin's), so
// the API refuses them switches, scales, odd dims and real positions.
const Contract kSinusoidalMutantContract{.layouts = {Layout::Interleaved, Layout::Concatenated},
                                         .outputs = {DType::F64},
                                         .angle_type = DType::F64,
                                         .compute_type = DType::F64,
                                         .max_position = std::int64_t{1} << 31,
                                         .max_input_abs = 1e30,
                                         .c0 = 1,
                                         .ck = 1,
                                         .c1 = 2.03,
                                         .table_switches = false};
// scalar_f64's contract for every form: its real positions' one more rounding (c1_scale).
const Contract kTimestepMutantContract = [] {
  Contract c = kSinusoidalMutantContract;
  c.table_switches = true;
  c.c1_scale = 1;
  return c;
}();
const Contract kRopeMutantContract{.layouts = {Layout::Interleaved, Layout::HalfSplit},
                                   .outputs = {DType::F64},
                                   .angle_type = DType::F64,
                                   .compute_type = DType::F64,
                                   .max_position = std::int64_t{1} << 31,
                                   .max_input_abs = 0x1p126,
                                   .c0 = 1,
                                   .ck = 3.001,
                                   .c1 = 2.03};

// A sinusoidal mutant from a (position, pair) -> (sin, cos) rule and an optional broken add.
template <class Rule, bool kIgnorePadding = false>
class SinusoidalMutant final : public SinusoidalVariant {
 public:
  explicit SinusoidalMutant(std::string name)
      : SinusoidalVariant(std::move(name), kSinusoidalMutantContract) {}
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    detail::write_table<double>(plan, positions, static_cast<double*>(out.data), Rule{plan});
  }
  // Never called: the contract takes the integer table only (the API refuses real positions).
  void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                Buffer out) const noexcept override {
    Rule rule{plan};
    detail::write_table<double>(plan, positions, static_cast<double*>(out.data),
                                [&rule](double t, std::size_t i, double& s, double& c) {
                                  rule(static_cast<std::int64_t>(t), i, s, c);
                                });
  }
  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer emb) const noexcept override {
    detail::add_table<double>(plan, positions, kIgnorePadding ? std::span<const std::uint8_t>{} : padding,
                              static_cast<double*>(emb.data), Rule{plan});
  }
};

struct SwappedSinCos {  // cos where sin belongs
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    detail::LibmSinCos<double, SinusoidalPlan>{plan}(p, i, c, s);
  }
};
struct OffByOnePosition {  // positions counted from 1
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    detail::LibmSinCos<double, SinusoidalPlan>{plan}(p + 1, i, s, c);
  }
};
struct SkipsOneRowIn2Pow20 {  // a refresh that skips a row: p = k·2^20 - 1 gets the row of p - 1
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    const bool skipped = p > 0 && (p + 1) % (std::int64_t{1} << 20) == 0;
    detail::LibmSinCos<double, SinusoidalPlan>{plan}(skipped ? p - 1 : p, i, s, c);
  }
};
struct FloatAngleClaimingDouble {  // a float32 angle under a float64 contract
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    const float a = static_cast<float>(p) * static_cast<float>(plan.inv_freq()[i]);
    s = std::sin(static_cast<double>(a));
    c = std::cos(static_cast<double>(a));
  }
};
struct Tensor2TensorExponent {  // ω_i = b^(-i/(d/2 - 1)) where the paper has b^(-2i/d)
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    const double h = static_cast<double>(plan.n_pairs());
    const double w = std::pow(plan.params().base, -static_cast<double>(i) / std::max(h - 1, 1.0));
    s = std::sin(static_cast<double>(p) * w);
    c = std::cos(static_cast<double>(p) * w);
  }
};
using Correct = detail::LibmSinCos<double, SinusoidalPlan>;

// Partial rotary with the frequency exponent over head_dim instead of rotary_dim (a bug the issue
// names); scaled plans' gains are ignored too, which is fine for a mutant.
struct ExponentOverHeadDim {
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, double& s, double& c) const noexcept {
    const double w =
        std::pow(plan.effective_base(), -2.0 * static_cast<double>(j) / static_cast<double>(plan.head_dim()));
    s = std::sin(static_cast<double>(p) * w);
    c = std::cos(static_cast<double>(p) * w);
  }
};

// A table mutant writing float32 and bfloat16 under the contract of the scalar variant computing in C
// (float: a float32 angle up to 2^24; double: a float64 angle up to 2^31), with a correct fused add.
template <class C>
class TableMutant : public SinusoidalVariant {
 public:
  explicit TableMutant(std::string name)
      : SinusoidalVariant(std::move(name), {.layouts = {Layout::Interleaved, Layout::Concatenated},
                                            .outputs = {DType::F32, DType::BF16},
                                            .angle_type = dtype_of<C>(),
                                            .compute_type = dtype_of<C>(),
                                            .max_position = std::int64_t{1} << (sizeof(C) == 4 ? 24 : 31),
                                            .max_input_abs = 1e30,
                                            .c0 = 1,
                                            .ck = 1,
                                            .c1 = sizeof(C) == 4 ? 3.001 : 2.03,
                                            .table_switches = false}) {}
  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer emb) const noexcept override {
    detail::with_typed(emb, [&](auto* data) {
      detail::add_table<C>(plan, positions, padding, data, detail::LibmSinCos<C, SinusoidalPlan>{plan});
    });
  }
  // Never called: these mutants break the integer table only, and their contract takes nothing else.
  void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                Buffer out) const noexcept override {
    const detail::LibmSinCos<C, SinusoidalPlan> rule{plan};
    detail::with_typed(out, [&](auto* data) {
      detail::write_table<C>(plan, positions, data, [&rule](double t, std::size_t i, C& s, C& c) {
        rule(static_cast<std::int64_t>(t), i, s, c);
      });
    });
  }

 private:
  template <class T>
  static constexpr DType dtype_of() {
    return sizeof(T) == 4 ? DType::F32 : DType::F64;
  }
};

// bfloat16 stored by truncation instead of rounding to nearest-even, over float32 sin/cos: within one
// bfloat16 ulp, so the budget (1·u_bf16) lets it pass; rounding must not.
class TruncatingBf16Table final : public TableMutant<float> {
 public:
  TruncatingBf16Table() : TableMutant("sinusoidal.mutant_bf16_truncates") {}
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    const detail::LibmSinCos<float, SinusoidalPlan> rule{plan};
    if (out.dtype == DType::F32) {
      detail::write_table<float>(plan, positions, static_cast<float*>(out.data), rule);
      return;
    }
    auto* y = static_cast<BFloat16*>(out.data);
    for (std::size_t r = 0; r < positions.size(); ++r) {
      for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
        float sn, cs;
        rule(positions[r], i, sn, cs);
        y[r * plan.dim() + plan.sin_index(i)] = truncated(sn);
        y[r * plan.dim() + plan.cos_index(i)] = truncated(cs);
      }
    }
  }

 private:
  static BFloat16 truncated(float v) {
    return {static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16)};
  }
};

// sin/cos carried from one row to the next along consecutive positions (a rotation by the step, in
// double) with a relative drift of 1e-9 per row, while the contract declares no state: invisible to
// the bfloat16 budget, visible as bits that depend on where a call starts.
class DriftingRecurrence final : public TableMutant<double> {
 public:
  DriftingRecurrence() : TableMutant("sinusoidal.mutant_drifting_recurrence") {}
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    detail::with_typed(out, [&](auto* y) { write(plan, positions, y); });
  }

 private:
  template <class Out>
  static void write(const SinusoidalPlan& plan, std::span<const std::int64_t> positions, Out* y) {
    const std::size_t h = plan.n_pairs();
    std::vector<double> s(h), c(h);  // mutants may allocate
    for (std::size_t r = 0; r < positions.size(); ++r) {
      const bool carry = r > 0 && positions[r] == positions[r - 1] + 1;
      for (std::size_t i = 0; i < h; ++i) {
        const double w = plan.inv_freq()[i];
        if (carry) {
          const double s1 = (s[i] * std::cos(w) + c[i] * std::sin(w)) * (1 + 1e-9);
          c[i] = (c[i] * std::cos(w) - s[i] * std::sin(w)) * (1 + 1e-9);
          s[i] = s1;
        } else {
          s[i] = std::sin(static_cast<double>(positions[r]) * w);
          c[i] = std::cos(static_cast<double>(positions[r]) * w);
        }
        y[r * plan.dim() + plan.sin_index(i)] = detail::store_as<Out>(s[i]);
        y[r * plan.dim() + plan.cos_index(i)] = detail::store_as<Out>(c[i]);
      }
    }
  }
};

// A RoPE mutant from a plan transformation and a direction rule.
enum class RopeBug {
  WrongPairing,
  RotatesPastRotaryDim,
  IgnoresDirection,
  IgnoresScaling,
  ExponentOverHeadDim,
  IgnoresDirectionUnlessSorted,  // a sorted-positions fast path honours it, the general path does not
  SkipsLastPairOfTail,           // pairs in blocks of 8, the last pair of a partial block dropped
  TouchesPassThrough,            // the first pass-through channel moved by one ulp
  RotaryAtStart,                 // DeepSeek MLA's rotary channels taken from the start of the head
  MropeInterleaveShifted,        // interleaved M-RoPE's t/h/w rule read at j + 1 (j%3 shifted)
};

// Pair j reads the axis interleaved M-RoPE gives pair j + 1 (any other form: its own axis), in double.
void rotate_shifted(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, double* data) {
  const RopeForm& form = plan.params().form;
  const bool shifted = !form.mrope_section.empty() && form.mrope_layout == MropeLayout::Interleaved;
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    for (std::size_t h = 0; h < batch.heads; ++h) {
      double* row = data + batch.row(t, h);
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const std::size_t axis = shifted ? axis_of_pair(form, plan.n_pairs(), j + 1) : plan.axis_of_pair(j);
        double phi = static_cast<double>(batch.position(t, axis)) * plan.inv_freq()[j];
        if (direction == RopeDirection::Inverse) phi = -phi;
        const double c = std::cos(phi) * plan.attention_factor(), s = std::sin(phi) * plan.attention_factor();
        const auto [i0, i1] = plan.input_channels(j);
        const double a = row[i0], b = row[i1];
        row[i0] = a * c - b * s;
        row[i1] = a * s + b * c;
      }
    }
  }
}

template <RopeBug kBug>
class RopeMutant final : public RopeVariant {
 public:
  explicit RopeMutant(std::string name) : RopeVariant(std::move(name), kRopeMutantContract) {}
  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    RopeParams params = plan.params();
    if (kBug == RopeBug::WrongPairing) {
      params.layout = params.layout == Layout::Interleaved ? Layout::HalfSplit : Layout::Interleaved;
    }
    if (kBug == RopeBug::RotatesPastRotaryDim) {
      params.rotary_dim = params.head_dim - params.rotary_offset;
      params.form.mrope_section.clear();  // sections of the old rotary_dim no longer sum to it
      for (auto* list :
           {&params.scaling.short_factor, &params.scaling.long_factor}) {  // LongRoPE's: one a pair
        if (!list->empty()) list->resize(static_cast<std::size_t>(params.head_dim / 2), list->back());
      }
    }
    if (kBug == RopeBug::IgnoresDirection) direction = RopeDirection::Forward;
    if (kBug == RopeBug::IgnoresScaling) params.scaling = {};
    if (kBug == RopeBug::RotaryAtStart) params.rotary_offset = 0;
    if (kBug == RopeBug::IgnoresDirectionUnlessSorted &&
        !std::is_sorted(batch.positions.begin(), batch.positions.end())) {
      direction = RopeDirection::Forward;
    }
    // Mutants may allocate: they exist only to be caught.
    const RopePlan used(params);
    auto* data = static_cast<double*>(x.data);
    if constexpr (kBug == RopeBug::MropeInterleaveShifted) {
      rotate_shifted(used, batch, direction, data);
    } else if constexpr (kBug == RopeBug::ExponentOverHeadDim) {
      detail::rotate<double>(used, batch, direction, data, ExponentOverHeadDim{used});
    } else if constexpr (kBug == RopeBug::SkipsLastPairOfTail || kBug == RopeBug::TouchesPassThrough) {
      std::vector<double> saved(batch.tokens() * batch.heads * 2);
      const std::size_t last = used.n_pairs() - 1;
      const bool skip = kBug == RopeBug::SkipsLastPairOfTail && used.n_pairs() % 8 != 0;
      for (std::size_t t = 0; skip && t < batch.tokens(); ++t) {
        for (std::size_t h = 0; h < batch.heads; ++h) {
          saved[2 * (t * batch.heads + h)] = data[batch.row(t, h) + used.pair_first(last)];
          saved[2 * (t * batch.heads + h) + 1] =
              data[batch.row(t, h) + used.pair_first(last) + used.pair_offset()];
        }
      }
      detail::rotate<double>(used, batch, direction, data, detail::LibmSinCos<double, RopePlan>{used});
      for (std::size_t t = 0; t < batch.tokens(); ++t) {
        for (std::size_t h = 0; h < batch.heads; ++h) {
          double* row = data + batch.row(t, h);
          if (skip) {
            row[used.pair_first(last)] = saved[2 * (t * batch.heads + h)];
            row[used.pair_first(last) + used.pair_offset()] = saved[2 * (t * batch.heads + h) + 1];
          }
          if (kBug == RopeBug::TouchesPassThrough && used.rotary_dim() < used.head_dim()) {
            row[used.rotary_dim()] = std::nextafter(row[used.rotary_dim()], INFINITY);
          }
        }
      }
    } else {
      detail::rotate<double>(used, batch, direction, data, detail::LibmSinCos<double, RopePlan>{used});
    }
  }
};

// A timestep embedding whose scale was dropped on the way (SD3's and Flux's t·1000 computed as t): the
// integer table is right, every scaled table_at is not.
class DropsTimestepScale final : public SinusoidalVariant {
 public:
  DropsTimestepScale()
      : SinusoidalVariant("sinusoidal.mutant_drops_timestep_scale", kTimestepMutantContract) {}
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    detail::write_table<double>(plan, positions, static_cast<double*>(out.data), Correct{plan});
  }
  void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                Buffer out) const noexcept override {
    detail::write_table<double>(plan, positions, static_cast<double*>(out.data),
                                [&plan](double t, std::size_t i, double& s, double& c) {
                                  s = std::sin(t * plan.inv_freq()[i]);  // scale·t meant
                                  c = std::cos(t * plan.inv_freq()[i]);
                                });
  }
  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer emb) const noexcept override {
    detail::add_table<double>(plan, positions, padding, static_cast<double*>(emb.data), Correct{plan});
  }
};

const Registrar r1{std::make_unique<SinusoidalMutant<SwappedSinCos>>("sinusoidal.mutant_swapped_sincos")};
const Registrar r2{std::make_unique<SinusoidalMutant<OffByOnePosition>>("sinusoidal.mutant_off_by_one")};
const Registrar r2b{
    std::make_unique<SinusoidalMutant<SkipsOneRowIn2Pow20>>("sinusoidal.mutant_skips_one_row_in_2pow20")};
const Registrar r3{
    std::make_unique<SinusoidalMutant<FloatAngleClaimingDouble>>("sinusoidal.mutant_float_angle")};
const Registrar r4{
    std::make_unique<SinusoidalMutant<Tensor2TensorExponent>>("sinusoidal.mutant_t2t_exponent")};
const Registrar r5{std::make_unique<SinusoidalMutant<Correct, true>>("sinusoidal.mutant_ignores_padding")};
const Registrar r5b{std::make_unique<DropsTimestepScale>()};
const Registrar r6{std::make_unique<RopeMutant<RopeBug::WrongPairing>>("rope.mutant_wrong_pairing")};
const Registrar r7{
    std::make_unique<RopeMutant<RopeBug::RotatesPastRotaryDim>>("rope.mutant_past_rotary_dim")};
const Registrar r8{std::make_unique<RopeMutant<RopeBug::IgnoresDirection>>("rope.mutant_ignores_direction")};
const Registrar r9{std::make_unique<RopeMutant<RopeBug::IgnoresScaling>>("rope.mutant_ignores_scaling")};
const Registrar r10{
    std::make_unique<RopeMutant<RopeBug::ExponentOverHeadDim>>("rope.mutant_exponent_over_head_dim")};
const Registrar r11{std::make_unique<TruncatingBf16Table>()};
const Registrar r12{std::make_unique<DriftingRecurrence>()};
const Registrar r13{std::make_unique<RopeMutant<RopeBug::IgnoresDirectionUnlessSorted>>(
    "rope.mutant_direction_unless_sorted")};
const Registrar r14{
    std::make_unique<RopeMutant<RopeBug::SkipsLastPairOfTail>>("rope.mutant_skips_tail_pair")};
const Registrar r15{
    std::make_unique<RopeMutant<RopeBug::TouchesPassThrough>>("rope.mutant_touches_pass_through")};
const Registrar r16{std::make_unique<RopeMutant<RopeBug::RotaryAtStart>>("rope.mutant_rotary_at_start")};
const Registrar r17{
    std::make_unique<RopeMutant<RopeBug::MropeInterleaveShifted>>("rope.mutant_mrope_interleave_shifted")};

// HF in a bfloat16 model with one more bfloat16 rounding where HF keeps float32, under rope.torch_bf16's
// contract (the default budget's largest bfloat16 class): the inv_freq buffer cast with the model
// (`model.to(torch.bfloat16)`), or positions made in inv_freq's dtype (integers past 256 not exact).
template <bool kRoundsFrequency>
struct Bf16AngleInputs {
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    float w = detail::HfRopeSinCos{plan}.inv_freq(j), position = static_cast<float>(p);
    if constexpr (kRoundsFrequency) {
      w = detail::rounded_to<BFloat16>(w);
    } else {
      position = detail::rounded_to<BFloat16>(position);
    }
    s = std::sin(w * position);
    c = std::cos(w * position);
  }
};
template <bool kRoundsFrequency>
using Bf16ModuleRope =
    detail::PairwiseRope<float, detail::CachedHfRopeSinCos<BFloat16, Bf16AngleInputs<kRoundsFrequency>>,
                         detail::Rotation16<BFloat16>::Backend>;
const Contract kBf16MutantContract = detail::rotation16_contract(DType::BF16, true, "");
const Registrar r17b{
    std::make_unique<Bf16ModuleRope<true>>("rope.mutant_bf16_inv_freq", kBf16MutantContract)};
const Registrar r17c{
    std::make_unique<Bf16ModuleRope<false>>("rope.mutant_bf16_positions", kBf16MutantContract)};

// ALiBi mutants under alibi.scalar_f64's contract: the slope exponent off by one (m0^h for m0^(h+1)),
// positions converted to float before their difference (the bias at 2^24 and beyond moves by whole
// units), and a vector loop that drops the last keys of a row that is not a multiple of 8.
enum class AlibiBug { ExponentOffByOne, FloatPositions, SkipsTailKeys };
const Contract kAlibiMutantContract{.layouts = {Layout::Hqk},
                                    .outputs = {DType::F64},
                                    .angle_type = DType::F64,
                                    .compute_type = DType::F64,
                                    .max_position = kMaxPosition,
                                    .max_base = 65536,
                                    .c0 = 1,
                                    .ck = 3,
                                    .c1 = 11.1,
                                    .c1_pair = 2.6};

template <AlibiBug kBug>
class AlibiMutant final : public AlibiVariant {
 public:
  explicit AlibiMutant(std::string name) : AlibiVariant(std::move(name), kAlibiMutantContract) {}
  static double slope(const AlibiPlan& plan, std::size_t h) {
    const auto k = plan.power(h) - (kBug == AlibiBug::ExponentOffByOne ? 1 : 0);
    return std::exp2(-plan.max_bias() * static_cast<double>(k) / static_cast<double>(plan.denominator(h)));
  }
  void slopes(const AlibiPlan& plan, Buffer out) const noexcept override {
    for (std::size_t h = 0; h < plan.n_heads(); ++h) static_cast<double*>(out.data)[h] = slope(plan, h);
  }
  void bias(const AlibiPlan& plan, std::span<const std::int64_t> queries, std::span<const std::int64_t> keys,
            Buffer out) const noexcept override {
    auto* y = static_cast<double*>(out.data);
    const std::size_t K = keys.size(), kept = kBug == AlibiBug::SkipsTailKeys ? K - K % 8 : K;
    for (std::size_t h = 0; h < plan.n_heads(); ++h) {
      for (const std::int64_t i : queries) {
        for (std::size_t k = 0; k < K; ++k) {
          double s = static_cast<double>(plan.multiplier(i, keys[k]));
          if (kBug == AlibiBug::FloatPositions)
            s = static_cast<double>(plan.multiplier(static_cast<std::int64_t>(static_cast<float>(i)),
                                                    static_cast<std::int64_t>(static_cast<float>(keys[k]))));
          y[k] = k < kept ? slope(plan, h) * s : 0.0;
        }
        y += K;
      }
    }
  }
};

const Registrar r18{
    std::make_unique<AlibiMutant<AlibiBug::ExponentOffByOne>>("alibi.mutant_exponent_off_by_one")};
const Registrar r19{std::make_unique<AlibiMutant<AlibiBug::FloatPositions>>("alibi.mutant_float_positions")};
const Registrar r20{std::make_unique<AlibiMutant<AlibiBug::SkipsTailKeys>>("alibi.mutant_skips_tail_keys")};

}  // namespace
}  // namespace pe
