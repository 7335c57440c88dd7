// The ALiBi family's row of FamilyTraits. ALiBi fits the generic entry point as a table whose rows
// are query positions and whose "dim" is the number of keys (0, 1, ..., dim - 1), for one head:
// its slopes are base^(-k/n') with base = 2^max_bias, as the sinusoids' frequencies are
// base^(-2i/d), so the generic properties' base is the head's 1/slope. The census's "dims" are head
// counts; its edges run every form and both slope rules.
#include <fmt/format.h>

#include <cmath>

#include "pe/api.h"
#include "pe/errors.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/measure_alibi.h"

namespace pe::harness {
namespace alibi_family {

void measure_plan(const Instance& in, const AlibiParams& params, const std::vector<std::int64_t>& queries,
                  const std::vector<std::int64_t>& keys, Measurement& m) {
  const AlibiPlan plan(params);
  TypedBuffer y(in.dtype, plan.n_heads() * queries.size() * keys.size());
  alibi_bias(*in.variant, plan, queries, keys, y.view());
  measure_alibi(params, queries, keys, y, {&in.contract(), in.dtype}, into(m));
  TypedBuffer slopes(in.dtype, plan.n_heads());
  alibi_slopes(*in.variant, plan, slopes.view());
  measure_alibi_slopes(params, slopes, {&in.contract(), in.dtype}, into(m));
}

// `heads` heads at b = 8; the band's positions as queries and as keys (distances within the band),
// with key 0 (the distance is the query's position, the band's scale).
void census_cell(const Instance& in, const std::vector<std::int64_t>& positions, std::int64_t heads,
                 double /*base*/, std::uint64_t /*seed*/, const census::Options& /*options*/,
                 Measurement& m) {
  std::vector<std::int64_t> keys = positions;
  keys.push_back(0);
  measure_plan(in, {.n_heads = heads}, positions, keys, m);
}

// 23 heads (interpolated: 16 + 7) and 23 keys around the first query: a tail for every vector
// width; each form, and the direct rule.
void census_edges(const Instance& in, const std::vector<std::int64_t>& positions, std::uint64_t /*seed*/,
                  Measurement& m) {
  std::vector<std::int64_t> keys;
  for (std::int64_t t = -11; t <= 11; ++t) keys.push_back(std::max<std::int64_t>(positions[0] + t, 0));
  for (AlibiForm form : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom}) {
    measure_plan(in, {.n_heads = kCensusEdgePairs, .form = form}, positions, keys, m);
  }
  measure_plan(in, {.n_heads = kCensusEdgePairs, .slopes = AlibiSlopes::Direct}, positions, keys, m);
}

std::vector<BenchShape> bench_shapes(BenchGrid grid) {
  auto bias = [](std::int64_t Q, std::int64_t K, bool far = false, DType t = DType::F32) {
    return BenchShape{.op = "bias", .dtype = t, .length = Q, .heads = 32, .dim = K, .far = far};
  };
  if (grid == BenchGrid::Smoke) return {bias(4, 16), bias(1, 16, true)};
  // Decode against 2^16 keys; prefill chunks against 2048 keys (the headline).
  std::vector<BenchShape> s = {bias(1, 65536), bias(1, 2048), bias(128, 2048)};
  if (grid == BenchGrid::Quick) return s;
  s.push_back(bias(2048, 2048));
  s.push_back(bias(2048, 2048, true));
  s.push_back(bias(128, 2048, false, DType::BF16));
  s.push_back(bias(128, 2048, false, DType::F64));
  return s;
}

// Keys 0.. (or 2^20..) and the queries the last `length` of them: a causal prefill chunk.
class BiasWorkload : public Workload {
 public:
  BiasWorkload(const Instance& in, const BenchShape& s)
      : in_(in),
        params_{.n_heads = s.heads},
        plan_(params_),
        keys_(bench_positions(static_cast<std::size_t>(s.dim), s.far)),
        queries_(keys_.end() - s.length, keys_.end()),
        out_(in.dtype, s.elements()) {
    elements = s.elements();
    bytes_written = elements * size_of(in.dtype);
    bytes_moved = bytes_written;
  }
  void run() override { alibi_bias(*in_.variant, plan_, queries_, keys_, out_.view()); }
  void check(const Sink& sink) override {
    run();
    measure_alibi(params_, queries_, keys_, out_, {&in_.contract(), in_.dtype}, sink,
                  bench_sample(queries_.size(), keys_.size()));
  }
  const void* data() const override { return &out_; }

 private:
  Instance in_;
  AlibiParams params_;
  AlibiPlan plan_;
  std::vector<std::int64_t> keys_, queries_;
  TypedBuffer out_;
};

std::unique_ptr<Workload> workload(const Instance& in, const BenchShape& s) {
  return std::make_unique<BiasWorkload>(in, s);
}

std::vector<std::int64_t> census_dims(const census::Options& options) {
  return options.effort == census::Effort::Full ? std::vector<std::int64_t>{8, 12, 40, 80}
                                                : std::vector<std::int64_t>{12};
}

// The generic entry point's plan: one head whose slope is 1/base.
AlibiParams generic_params(double base, Layout layout) {
  if (!(base > 1) || !std::isfinite(base))
    throw InvalidArgument("base",
                          fmt::format("base must be finite and > 1 (max_bias = log2(base)), got {}", base));
  return {.n_heads = 1, .max_bias = std::log2(base), .layout = layout};
}

std::vector<std::int64_t> generic_keys(std::int64_t n_keys) {
  if (n_keys < 1) throw InvalidArgument("n_keys", fmt::format("n_keys must be >= 1, got {}", n_keys));
  return bench_positions(static_cast<std::size_t>(n_keys), false);
}

void call(const Variant& v, Layout layout, std::int64_t n_keys, double base,
          std::span<const std::int64_t> queries, Buffer data, std::int64_t /*heads*/) {
  const AlibiParams params = generic_params(base, layout);
  alibi_bias(v, AlibiPlan(params), queries, generic_keys(n_keys), data);
}

std::vector<BudgetTerms> budget_terms(Layout layout, std::int64_t n_keys, double base,
                                      std::span<const std::int64_t> queries, std::int64_t /*heads*/,
                                      std::span<const double> /*x*/) {
  const AlibiPlan plan(generic_params(base, layout));
  const std::vector<std::int64_t> keys = generic_keys(n_keys);
  std::vector<BudgetTerms> out;
  for (const std::int64_t i : queries) {
    for (const std::int64_t j : keys) {
      const double magnitude = std::fabs(plan.slope(0) * static_cast<double>(plan.multiplier(i, j)));
      out.push_back({1.0, static_cast<std::size_t>(plan.power(0)), magnitude});  // relative: pe/contract.h
    }
  }
  return out;
}

void measure_call(const Instance& in, std::int64_t n_keys, double base, std::span<const std::int64_t> queries,
                  std::int64_t /*heads*/, std::span<const double> /*x*/, Values y, const Sink& sink,
                  const Sample& sample) {
  const AlibiParams params = generic_params(base, in.layout);
  measure_alibi(params, queries, generic_keys(n_keys), y, {&in.contract(), in.dtype}, sink, sample);
}

constexpr ReportColumn kColumns[] = {{"Q=1", 1, "start"}, {"Q=128", 128, "start"}, {"Q=2048", 2048, "start"}};

}  // namespace alibi_family

const FamilyTraits& alibi_traits() {
  using namespace alibi_family;
  static const FamilyTraits row{
      .family = Family::Alibi,
      .name = to_string(Family::Alibi),
      .budget_scale = "× |bias|; |φ| = 1, i = the slope's power k",
      .census_dims = census_dims,
      .census_cell = census_cell,
      .census_edges = census_edges,
      .bench_shapes = bench_shapes,
      .workload = workload,
      .call = call,
      .dim_argument = "n_keys",
      .positions_argument = "queries",
      .even_dim = false,
      .property_max_dim = 256,
      .budget_terms = budget_terms,
      .measure = measure_call,
      .headline_op = "bias",
      .headline_heads = 32,
      .headline_dim = 2048,
      .caption = "32 heads x 2048 keys",
      .length_label = "queries",
      .summary_length = 2048,
      .summary_shape = "H32·Q2048·K2048",
      .summary_caption = "32 heads x 2048 queries x 2048 keys",
      .columns = kColumns,
  };
  return row;
}

}  // namespace pe::harness
