// The RoPE family's row of FamilyTraits: census cells (under the census's scaling and partial
// rotary factor), benchmark shapes and workloads, report words.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "pe/api.h"
#include "pe/harness/exhaustive_table.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/run.h"
#include "pe/plan.h"
#include "pe/ref/reference.h"

namespace pe::harness {
namespace rope_family {

// [n_axes][tokens] from one axis of band positions: t = p; the other axes up to 23 rows and 31
// columns back (never below 0), as an image's patches count theirs from the image's t.
std::vector<std::int64_t> axes_of(const std::vector<std::int64_t>& positions, std::size_t n_axes) {
  std::vector<std::int64_t> out = positions;
  for (std::size_t a = 1; a < n_axes; ++a) {
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const auto back = static_cast<std::int64_t>((i * (2 * a + 5)) % (a == 1 ? 24 : 32));
      out.push_back(std::max<std::int64_t>(positions[i] - back, 0));
    }
  }
  return out;
}

// Rotates random rows of the instance under params (forward or back) and measures every element.
void measure_cell(const Instance& in, const RopeParams& params, const std::vector<std::int64_t>& positions,
                  std::size_t heads, std::uint64_t seed, RopeDirection direction, Measurement& m) {
  const RopePlan plan(params);
  const std::vector<std::int64_t> axes = axes_of(positions, plan.n_axes());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  TypedBuffer y(in.dtype, positions.size() * heads * plan.head_dim());
  for (std::size_t i = 0; i < y.size(); ++i) y.set(i, u(rng));
  const std::vector<double> x = y.values();  // the reference rotates exactly what the variant is given
  rotate_in_place(in, plan, axes, static_cast<std::int64_t>(heads), y, direction);
  measure_rope(params, axes, heads, x, y, {&in.contract(), in.dtype}, into(m), {}, direction);
}

void census_cell(const Instance& in, const std::vector<std::int64_t>& positions, std::int64_t head_dim,
                 double base, std::uint64_t seed, const census::Options& options, Measurement& m) {
  RopeParams params{head_dim, census::rotary_dim_of(options, head_dim), base, in.layout, options.scaling};
  params.form = options.form;
  params.rotary_offset = options.rotary_offset;
  const RopePlan plan(params);
  // NTK and dynamic raise the base: past the contract's max_base its budget is not derived, so such
  // (dim, base) cells are left out of the instance's bands rather than judged.
  if (plan.effective_base() > in.contract().max_base) return;
  measure_cell(in, params, positions, 2, seed, RopeDirection::Forward, m);
}

// 23 rotated pairs of a 78-channel head (16 pass through), rotated backwards: the inverse of an
// attention backward pass, at positions the caller arranged out of order.
// Also the forms' structure at the band's positions: Qwen2.5-VL's M-RoPE (128, sections 16, 24, 24,
// base 10^6), DeepSeek MLA's q (192 channels, the last 64 rotated, de-interleaved where the instance
// pairs interleaved) and the video transformers' axial RoPE (128 channels, axes 16, 56, 56, θ 10^4 and 256).
void census_edges(const Instance& in, const std::vector<std::int64_t>& positions, std::uint64_t seed,
                  Measurement& m) {
  const RopeParams edges{2 * kCensusEdgePairs + 32, 2 * kCensusEdgePairs, 10000.0, in.layout};
  measure_cell(in, edges, positions, 1, seed, RopeDirection::Inverse, m);
  RopeParams mrope{128, 128, 1e6, in.layout};
  mrope.form.mrope_section = {16, 24, 24};
  measure_cell(in, mrope, positions, 1, seed ^ 1, RopeDirection::Forward, m);
  RopeParams mla{192, 64, 10000.0, in.layout == Layout::Interleaved ? Layout::Deinterleave : in.layout};
  mla.rotary_offset = 128;
  measure_cell(in, mla, positions, 1, seed ^ 2, RopeDirection::Forward, m);
  for (const double theta : {1e4, 256.0}) {  // Flux's EmbedND, HunyuanVideo's theta
    RopeParams axial{128, 128, theta, in.layout};
    axial.form.axes_dim = {16, 56, 56};
    measure_cell(in, axial, positions, 1, seed ^ 3, RopeDirection::Forward, m);
  }
}

constexpr std::int64_t kFluxSide = 64, kFluxTokens = kFluxSide * kFluxSide;
constexpr std::int64_t kVideoFrames = 16, kVideoRows = 90, kVideoCols = 160;

std::vector<BenchShape> bench_shapes(BenchGrid grid) {
  auto rope = [](std::int64_t T, std::int64_t D, bool far, bool yarn = false, DType t = DType::F32,
                 std::int64_t heads = 32, const char* form = "text") {
    return BenchShape{.op = "rope",
                      .dtype = t,
                      .length = T,
                      .heads = heads,
                      .dim = D,
                      .far = far,
                      .scaling = yarn ? "yarn" : "none",
                      .form = form};
  };
  const DType f32 = DType::F32;
  // Qwen2.5-VL's M-RoPE at the 1-D headline shape (T2048 H32 D128), so the two compare; DeepSeek's
  // MLA q: 128 heads of [nope 128 | pe 64], decode at 2^20 and a 2048-token prefill.
  auto mrope = [&](std::int64_t T, std::int64_t heads) {
    return rope(T, 128, false, false, f32, heads, "mrope");
  };
  auto mla = [&](std::int64_t T, bool far, std::int64_t heads) {
    return rope(T, 192, far, false, f32, heads, "mla");
  };
  // Axial RoPE (axes 16, 56, 56): Flux's 64 x 64 latent patches at 24 heads, and the video, 16 frames
  // of 90 x 160 patches (230400 tokens x 24 heads x 128: 2.8 GB of float32, the full grid only).
  auto axial = [&](std::int64_t T) { return rope(T, 128, false, false, f32, 24, "axial"); };
  if (grid == BenchGrid::Smoke) {
    return {rope(2, 64, false, false, f32, 2),
            rope(1, 64, true, false, f32, 2),
            rope(2, 64, false, true, f32, 2),
            mrope(40, 2),
            mla(2, false, 2),
            axial(40),
            rope(64, 64, false, false, f32, 16).with_threads(2)};  // 2^16 elements: two pieces
  }
  if (grid == BenchGrid::Quick) {
    // The 16-bit shapes time the variants that write 16-bit data only (rope.torch_bf16, rope.math_f16, ...):
    // register_grid leaves them out for a variant timed in float32 already.
    return {rope(1, 128, true),
            rope(2048, 128, false),
            rope(2048, 128, false, true),
            mrope(2048, 32),
            mla(1, true, 128),
            mla(2048, false, 128),
            axial(kFluxTokens / 4),  // 16 rows of Flux's latent: the quick grid's time
            rope(2048, 128, false, false, DType::BF16),
            rope(2048, 128, false, false, DType::F16)};
  }
  std::vector<BenchShape> s;
  for (std::int64_t T : {1, 16, 128, 2048, 16384}) s.push_back(rope(T, 128, false));
  for (std::int64_t T : {1, 2048}) s.push_back(rope(T, 128, true));
  for (std::int64_t D : {64, 256}) s.push_back(rope(2048, D, false));
  for (std::int64_t T : {1, 2048}) s.push_back(rope(T, 128, false, true));
  // 16-bit data: every variant writing it, the 16-bit rotations (rope.torch_bf16, rope.math_f16, ...) only
  // so.
  for (const DType t : {DType::BF16, DType::F16}) s.push_back(rope(2048, 128, false, false, t));
  for (const BenchShape& f : {mrope(2048, 32), mla(1, true, 128), mla(2048, false, 128), axial(kFluxTokens),
                              axial(kVideoFrames * kVideoRows * kVideoCols)})
    s.push_back(f);
  for (std::int64_t T : {2048, 16384})  // two threads (text RoPE: split by tokens)
    s.push_back(rope(T, 128, false).with_threads(2));
  return s;
}

// The params of a shape's form: text RoPE; Qwen2.5-VL's M-RoPE (sections 16, 24, 24, base 10^6); DeepSeek
// MLA's q_pe on the last 64 of 192 channels, de-interleaved where the instance pairs interleaved; axial RoPE
// (axes 16, 56, 56, θ 10^4: Flux's).
RopeParams bench_params(const Instance& in, const BenchShape& s) {
  RopeParams p{s.dim, 0, 10000.0, in.layout, bench_rope_scaling(s.scaling)};
  if (s.form == "mrope") {
    p.base = 1e6;
    p.form.mrope_section = {16, 24, 24};
  } else if (s.form == "axial") {
    p.form.axes_dim = {16, 56, 56};
  } else if (s.form == "mla") {
    p.rotary_offset = 128;
    p.rotary_dim = s.dim - 128;
    if (in.layout == Layout::Interleaved) p.layout = Layout::Deinterleave;
  } else if (s.form != "text") {
    throw std::invalid_argument("no RoPE benchmark form '" + s.form + "'");
  }
  return p;
}

// An axial shape's (frame, row, column) cells, row-major: the video's 16 x 90 x 160 at its length, else
// frames of 64 x 64 (Flux's latent at 1024 px), cut to the length.
std::vector<std::int64_t> axial_positions(std::size_t n) {
  const bool video = n == static_cast<std::size_t>(kVideoFrames * kVideoRows * kVideoCols);
  const std::size_t rows = video ? kVideoRows : kFluxSide, cols = video ? kVideoCols : kFluxSide;
  std::vector<std::int64_t> out(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<std::int64_t>(i / (rows * cols));
    out[n + i] = static_cast<std::int64_t>(i / cols % rows);
    out[2 * n + i] = static_cast<std::int64_t>(i % cols);
  }
  return out;
}

// [n_axes][tokens]: the text form's run; M-RoPE's two-image prompt (HF get_rope_index): text, a 32 x 24
// image, text, a 24 x 32 image, text, each image's tokens sharing t and counting rows and columns.
std::vector<std::int64_t> form_positions(const BenchShape& s) {
  const auto n = static_cast<std::size_t>(s.length);
  if (s.form == "axial") return axial_positions(n);
  if (s.form != "mrope") return bench_positions(n, s.far);
  std::vector<std::int64_t> t, h, w;
  std::int64_t next = s.far ? std::int64_t{1} << 20 : 0;
  const std::int64_t image_rows[2] = {32, 24}, image_cols[2] = {24, 32};
  auto text = [&](std::size_t count) {
    for (std::size_t k = 0; k < count && t.size() < n; ++k, ++next) {
      t.push_back(next);
      h.push_back(next);
      w.push_back(next);
    }
  };
  for (int image = 0; image < 2; ++image) {
    text(n / 8);
    for (std::int64_t r = 0; r < image_rows[image]; ++r) {
      for (std::int64_t c = 0; c < image_cols[image] && t.size() < n; ++c) {
        t.push_back(next);
        h.push_back(next + r);
        w.push_back(next + c);
      }
    }
    next += std::max(image_rows[image], image_cols[image]);
  }
  text(n - t.size());
  std::vector<std::int64_t> out = t;
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), w.begin(), w.end());
  return out;
}

// x[i] = ((i mod 61) - 30) / 32 in the buffer's type. The 61 values are converted once and their bytes
// copied in doubling blocks: converting every element (ldexp, a switch on the type) cost more than the
// timed calls, and with interleaved repetitions a fixture is built about three times per benchmark.
void fill_input(TypedBuffer& x) {
  const std::size_t period = std::min<std::size_t>(61, x.size());
  for (std::size_t i = 0; i < period; ++i) x.set(i, (static_cast<double>(i) - 30) / 32);
  const Buffer v = x.view();
  auto* bytes = static_cast<unsigned char*>(v.data);
  const std::size_t total = v.size * size_of(v.dtype);
  for (std::size_t done = period * size_of(v.dtype); done < total;) {
    // `done` stays a whole number of periods, so its prefix continues the pattern from there.
    const std::size_t n = std::min(done, total - done);
    std::memcpy(bytes + done, bytes, n);
    done += n;
  }
}

// Rotating the same buffer over and over keeps its norm (up to rounding): the timed calls see the
// same kind of data as the checked one.
class RotateWorkload : public Workload {
 public:
  RotateWorkload(const Instance& in, const BenchShape& s)
      : in_(in),
        params_(bench_params(in, s)),
        plan_(params_),
        positions_(form_positions(s)),
        heads_(s.heads),
        x_(in.dtype, s.elements()),
        pool_(s.threads > 1 ? std::make_unique<ThreadPool>(static_cast<std::size_t>(s.threads)) : nullptr) {
    fill_input(x_);
    elements = s.elements();
    bytes_written = elements * size_of(in.dtype);
    bytes_moved = 2 * bytes_written;
  }
  void run() override {
    if (pool_ != nullptr) {
      rope_apply(*in_.variant, plan_, positions_, heads_, x_.view(), *pool_);
    } else {
      rotate_in_place(in_, plan_, positions_, heads_, x_);
    }
  }
  void check(const Sink& sink) override {
    const TypedBuffer before = x_;
    run();
    measure_rope(params_, positions_, static_cast<std::size_t>(heads_), before, x_,
                 {&in_.contract(), in_.dtype}, sink,
                 bench_sample(positions_.size() / plan_.n_axes(), plan_.n_pairs()));
  }
  const void* data() const override { return &x_; }

 private:
  Instance in_;
  RopeParams params_;
  RopePlan plan_;
  std::vector<std::int64_t> positions_;
  std::int64_t heads_;
  TypedBuffer x_;
  std::unique_ptr<ThreadPool> pool_;
};

std::unique_ptr<Workload> workload(const Instance& in, const BenchShape& s) {
  return std::make_unique<RotateWorkload>(in, s);
}

bool census_applies(const census::Options& /*options*/) { return true; }

void call(const Variant& v, Layout layout, std::int64_t dim, double base,
          std::span<const std::int64_t> positions, Buffer data, std::int64_t heads) {
  rope_apply(v, RopePlan({dim, 0, base, layout}), positions, heads, data);
}

std::vector<BudgetTerms> budget_terms(Layout layout, std::int64_t dim, double base,
                                      std::span<const std::int64_t> positions, std::int64_t heads,
                                      std::span<const double> x) {
  const RopePlan plan({dim, 0, base, layout});
  const std::size_t hd = plan.head_dim(), rows = positions.size() * static_cast<std::size_t>(heads);
  std::vector<BudgetTerms> out(rows * hd);
  for (std::size_t row = 0; row < rows; ++row) {
    const std::int64_t p = positions[row / static_cast<std::size_t>(heads)];
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const std::size_t i0 = row * hd + plan.pair_first(j), i1 = i0 + plan.pair_offset();
      const BudgetTerms t{std::fabs(static_cast<double>(p) * plan.inv_freq()[j]), j,
                          std::fabs(x[i0]) + std::fabs(x[i1])};
      out[i0] = out[i1] = t;
    }
  }
  return out;
}

void measure_call(const Instance& in, std::int64_t dim, double base, std::span<const std::int64_t> positions,
                  std::int64_t heads, std::span<const double> x, Values y, const Sink& sink,
                  const Sample& sample) {
  measure_rope({dim, 0, base, in.layout}, positions, static_cast<std::size_t>(heads), x, y,
               {&in.contract(), in.dtype}, sink, sample);
}

constexpr ReportColumn kColumns[] = {{"T=1", 1, "start"},
                                     {"T=1 at 2^20 (decode)", 1, "far"},
                                     {"T=2048", 2048, "start"},
                                     {"T=16384", 16384, "start"}};

// The RoPE family's exhaustive table: each pair's unit vector (1, 0) rotated, so a row holds
// (cos φ, sin φ) in the pair's output channels.
class RopeTable final : public ExhaustiveTable {
 public:
  RopeTable(const RopeParams& params, std::int64_t max_position)
      : plan_(params), ref_(params, max_position) {}
  const ref::dd::DD& omega(std::size_t j) const override { return ref_.omega(j); }
  std::size_t sin_channel(std::size_t j) const override { return plan_.output_channels(j).second; }
  std::size_t cos_channel(std::size_t j) const override { return plan_.output_channels(j).first; }
  bool reads_input() const override { return true; }
  void write_input(TypedBuffer& input, std::int64_t rows) const override {
    const auto dim = static_cast<std::int64_t>(plan_.head_dim());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < plan_.n_pairs(); ++j)
        input.set(static_cast<std::size_t>(r * dim) + plan_.input_channels(j).first, 1.0);
  }
  double element_budget(const Budget& budget, double abs_phi, std::size_t j) const override {
    return budget(&plan_, abs_phi, j, 1.0);
  }
  double abs_angle(std::int64_t p, std::size_t j) const override { return std::fabs(ref_.angle(p, j)); }
  std::optional<ref::FastSinCos> fast(std::int64_t p, std::size_t j) const override {
    const auto v = ref_.fast_rotate(p, j, 1.0, 0.0);
    if (!v) return std::nullopt;
    return ref::FastSinCos{v->second.value, v->first.value, std::max(v->first.radius, v->second.radius)};
  }
  ref::Real exact(std::int64_t p, std::size_t j, bool is_sin) const override {
    const auto r = ref_.rotate(p, j, 1.0, 0.0);
    return is_sin ? r.second.value : r.first.value;
  }

 private:
  RopePlan plan_;
  ref::Rope ref_;
};

// Every layout but DeepSeek's de-interleaved output order, which the unit-vector table cannot tell from
// interleaved (the same pairs, other channels).
bool exhaustive_applies(const Instance& in) { return in.layout != Layout::Deinterleave; }

std::unique_ptr<ExhaustiveTable> exhaustive_table(const Instance& in, std::int64_t dim, double base,
                                                  std::int64_t max_position) {
  return std::make_unique<RopeTable>(RopeParams{dim, 0, base, in.layout}, max_position);
}

}  // namespace rope_family

RopeScaling bench_rope_scaling(const std::string& name) {
  RopeScaling s;
  if (name == "none") return s;
  if (name != "yarn") throw std::invalid_argument("rope benchmark scaling: no shape named '" + name + "'");
  s.type = RopeScalingType::Yarn;
  s.factor = 4;
  s.original_max_position = 32768;
  return s;
}

const FamilyTraits& rope_traits() {
  using namespace rope_family;
  static const FamilyTraits row{
      .family = Family::Rope,
      .name = to_string(Family::Rope),
      .budget_scale = "× |x_a|+|x_b|",
      .census_applies = census_applies,
      .census_dims = census::rope_head_dims,
      .census_cell = census_cell,
      .census_edges = census_edges,
      .bench_shapes = bench_shapes,
      .workload = workload,
      .call = call,
      .dim_argument = "head_dim",
      .data_argument = "x",
      .reads_data = true,
      .has_heads = true,
      .property_max_dim = 256,
      .budget_terms = budget_terms,
      .measure = measure_call,
      .headline_op = "rope",
      .headline_heads = 32,
      .headline_dim = 128,
      .caption = "32 heads x head_dim 128",
      .length_label = "tokens",
      .summary_length = 2048,
      .summary_shape = "T2048·H32·D128",
      .summary_caption = "2048 tokens x 32 heads x 128",
      .columns = kColumns,
      .exhaustive_applies = exhaustive_applies,
      .exhaustive_table = exhaustive_table,
  };
  return row;
}

}  // namespace pe::harness
