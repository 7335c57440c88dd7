// The sinusoidal family's row of FamilyTraits: census cells, benchmark shapes and workloads, report
// words.
#include <cmath>
#include <random>

#include "families/sinusoidal_forms.h"
#include "pe/api.h"
#include "pe/harness/exhaustive_table.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/run.h"
#include "pe/plan.h"
#include "pe/ref/reference.h"

namespace pe::harness {
namespace sinusoidal_family {

void census_cell(const Instance& in, const std::vector<std::int64_t>& positions, std::int64_t dim,
                 double base, std::uint64_t /*seed*/, const census::Options& /*options*/, Measurement& m) {
  const SinusoidalParams params{dim, base, in.layout};
  const TypedBuffer y = run_table(in, SinusoidalPlan(params), positions);
  measure_sinusoidal(params, positions, y, {&in.contract(), in.dtype}, into(m));
}

// The fused add at 46 channels (a tail of 23 pairs) onto embeddings in [-1, 1], the second row padded.
void census_edges(const Instance& in, const std::vector<std::int64_t>& positions, std::uint64_t seed,
                  Measurement& m) {
  const SinusoidalParams params{2 * kCensusEdgePairs, 10000.0, in.layout};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  TypedBuffer y(in.dtype, positions.size() * static_cast<std::size_t>(params.dim));
  for (std::size_t i = 0; i < y.size(); ++i) y.set(i, u(rng));
  const std::vector<double> embeddings = y.values();
  std::vector<std::uint8_t> padding(positions.size(), 0);
  padding[1 % padding.size()] = 1;
  sinusoidal_add(*in.variant, SinusoidalPlan(params), positions, y.view(), padding);
  measure_sinusoidal_add(params, positions, embeddings, padding, y, {&in.contract(), in.dtype}, into(m));
}

// Largest table the report grid times at every (layout, op, positions): 2^25 elements (128 MiB of
// float32). One shape goes beyond, L = 2^20 × d = 128 (512 MiB), as a table at the start positions
// in each variant's first layout: at 9 repetitions a scalar pass over gigabytes would push the full
// grid far past 30 minutes on 2 cores.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 25;

std::vector<BenchShape> bench_shapes(BenchGrid grid) {
  const auto F32 = DType::F32;
  auto table = [](std::int64_t L, std::int64_t d, bool far, bool add, DType t = DType::F32,
                  bool first = false) {
    return BenchShape{.op = add ? "add" : "table",
                      .dtype = t,
                      .length = L,
                      .dim = d,
                      .far = far,
                      .first_layout_only = first};
  };
  std::vector<BenchShape> s;
  // Diffusion timestep embeddings (issue 49): a batch of real timesteps through table_at.
  auto timesteps = [](std::int64_t n, std::int64_t d) {
    return BenchShape{.op = "timesteps", .length = n, .dim = d, .first_layout_only = true};
  };
  if (grid == BenchGrid::Smoke)
    return {table(16, 64, false, false, F32, true), table(16, 64, true, true, F32, true),
            table(512, 128, false, false, F32, true).with_threads(2),  // 2^16 elements: two pieces
            timesteps(4, 256)};
  if (grid == BenchGrid::Quick) {
    for (std::int64_t L : {128, 8192}) {
      s.push_back(table(L, 128, false, false));
      s.push_back(table(L, 128, false, true));
    }
    s.push_back(table(128, 128, true, false));
    return s;
  }
  for (std::int64_t n : {1, 64, 1024, 4096})
    for (std::int64_t d : {256, 1280}) s.push_back(timesteps(n, d));
  for (std::int64_t L : {1, 16, 128, 1024, 8192, 65536, 1 << 20}) {
    for (std::int64_t d : {64, 512, 128, 4096}) {
      if (L * d <= kMaxElements) s.push_back(table(L, d, false, false, F32, d != 128));
    }
    if (L * 128 > kMaxElements) continue;
    s.push_back(table(L, 128, true, false));
    s.push_back(table(L, 128, false, true));
  }
  for (std::int64_t L : {128, 8192, 65536}) {
    s.push_back(table(L, 128, false, false, DType::BF16));
    s.push_back(table(L, 128, false, false, DType::F64));
  }
  s.push_back(table(1 << 20, 128, false, false, F32, true));
  // Two threads where a table is large enough to split: in cache, beyond it, and the fused add.
  for (const BenchShape& t :
       {table(8192, 128, false, false, F32, true), table(1 << 20, 128, false, false, F32, true),
        table(8192, 128, false, true, F32, true)})
    s.push_back(t.with_threads(2));
  return s;
}

class TableWorkload : public Workload {
 public:
  TableWorkload(const Instance& in, const BenchShape& s)
      : in_(in),
        add_(s.op == "add"),
        params_{s.dim, 10000.0, in.layout},
        plan_(params_),
        positions_(bench_positions(static_cast<std::size_t>(s.length), s.far)),
        out_(in.dtype, s.elements()),
        pool_(s.threads > 1 ? std::make_unique<ThreadPool>(static_cast<std::size_t>(s.threads)) : nullptr) {
    elements = s.elements();
    bytes_written = elements * size_of(in.dtype);
    bytes_moved = add_ ? 2 * bytes_written : bytes_written;
  }
  void run() override {
    if (pool_ != nullptr && add_) {
      sinusoidal_add(*in_.variant, plan_, positions_, out_.view(), {}, *pool_);
    } else if (pool_ != nullptr) {
      sinusoidal_table(*in_.variant, plan_, positions_, out_.view(), *pool_);
    } else if (add_) {
      sinusoidal_add(*in_.variant, plan_, positions_, out_.view());
    } else {
      sinusoidal_table(*in_.variant, plan_, positions_, out_.view());
    }
  }
  void check(const Sink& sink) override {
    run();  // an add onto zeros is the table itself
    Budget budget{&in_.contract(), in_.dtype};
    if (add_) budget.extra = add_budget(in_.contract(), in_.dtype, 0.0);
    measure_sinusoidal(params_, positions_, out_, budget, sink,
                       bench_sample(positions_.size(), plan_.n_pairs()));
  }
  const void* data() const override { return &out_; }

 private:
  Instance in_;
  bool add_;
  SinusoidalParams params_;
  SinusoidalPlan plan_;
  std::vector<std::int64_t> positions_;
  TypedBuffer out_;
  std::unique_ptr<ThreadPool> pool_;
};

std::unique_ptr<Workload> workload(const Instance& in, const BenchShape& s) {
  if (s.op == "timesteps") return timestep_workload(in, s);
  return std::make_unique<TableWorkload>(in, s);
}

std::vector<std::int64_t> census_dims(const census::Options& options) {
  return census::grid_dims(options.effort);
}

void call(const Variant& v, Layout layout, std::int64_t dim, double base,
          std::span<const std::int64_t> positions, Buffer data, std::int64_t /*heads*/) {
  sinusoidal_table(v, SinusoidalPlan({dim, base, layout}), positions, data);
}

std::vector<BudgetTerms> budget_terms(Layout layout, std::int64_t dim, double base,
                                      std::span<const std::int64_t> positions, std::int64_t /*heads*/,
                                      std::span<const double> /*x*/) {
  const SinusoidalPlan plan({dim, base, layout});
  std::vector<BudgetTerms> out(positions.size() * plan.dim());
  for (std::size_t r = 0; r < positions.size(); ++r) {
    for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
      const double phi = std::fabs(static_cast<double>(positions[r]) * plan.inv_freq()[i]);
      for (std::size_t ch : {plan.sin_index(i), plan.cos_index(i)}) out[r * plan.dim() + ch] = {phi, i, 1.0};
    }
  }
  return out;
}

void measure_call(const Instance& in, std::int64_t dim, double base, std::span<const std::int64_t> positions,
                  std::int64_t /*heads*/, std::span<const double> /*x*/, Values y, const Sink& sink,
                  const Sample& sample) {
  measure_sinusoidal({dim, base, in.layout}, positions, y, {&in.contract(), in.dtype}, sink, sample);
}

constexpr ReportColumn kColumns[] = {
    {"L=128", 128, "start"}, {"L=8192", 8192, "start"}, {"L=2^20", 1 << 20, "start"}};

// The sinusoidal family's exhaustive table: the table itself, sin and cos of each pair in its layout's
// channels.
class SinusoidalTable final : public ExhaustiveTable {
 public:
  SinusoidalTable(const SinusoidalParams& params, std::int64_t max_position)
      : plan_(params), ref_(params, max_position) {}
  const ref::dd::DD& omega(std::size_t j) const override { return ref_.omega(j); }
  std::size_t sin_channel(std::size_t j) const override { return plan_.sin_index(j); }
  std::size_t cos_channel(std::size_t j) const override { return plan_.cos_index(j); }
  bool reads_input() const override { return false; }
  void write_input(TypedBuffer& /*input*/, std::int64_t /*rows*/) const override {}
  double element_budget(const Budget& budget, double abs_phi, std::size_t j) const override {
    return budget(nullptr, abs_phi, j, 1.0);
  }
  double abs_angle(std::int64_t p, std::size_t j) const override {
    return std::fabs(ref_.angle(p, plan_.sin_index(j)));
  }
  std::optional<ref::FastSinCos> fast(std::int64_t p, std::size_t j) const override {
    return ref_.fast_pair(p, j);
  }
  ref::Real exact(std::int64_t p, std::size_t j, bool is_sin) const override {
    return ref_.exact(p, is_sin ? plan_.sin_index(j) : plan_.cos_index(j)).value;
  }

 private:
  SinusoidalPlan plan_;
  ref::Sinusoidal ref_;
};

bool exhaustive_applies(const Instance& /*in*/) { return true; }

std::unique_ptr<ExhaustiveTable> exhaustive_table(const Instance& in, std::int64_t dim, double base,
                                                  std::int64_t max_position) {
  return std::make_unique<SinusoidalTable>(SinusoidalParams{dim, base, in.layout}, max_position);
}

}  // namespace sinusoidal_family

const FamilyTraits& sinusoidal_traits() {
  using namespace sinusoidal_family;
  static const FamilyTraits row{
      .family = Family::Sinusoidal,
      .name = to_string(Family::Sinusoidal),
      .census_dims = census_dims,
      .census_cell = census_cell,
      .census_edges = census_edges,
      .census_forms = census_forms,
      .bench_shapes = bench_shapes,
      .workload = workload,
      .call = call,
      // An odd dim is a table whose last channel is a zero pad (issue 49: diffusers, fairseq), not an error.
      .even_dim = false,
      .property_max_dim = 1024,
      .budget_terms = budget_terms,
      .measure = measure_call,
      .headline_op = "table",
      .headline_dim = 128,
      .caption = "table, d = 128",
      .length_label = "sequence length",
      .summary_length = 8192,
      .summary_shape = "L8192·d128",
      .summary_caption = "L = 8192, d = 128",
      .columns = kColumns,
      .exhaustive_applies = exhaustive_applies,
      .exhaustive_table = exhaustive_table,
  };
  return row;
}

}  // namespace pe::harness
