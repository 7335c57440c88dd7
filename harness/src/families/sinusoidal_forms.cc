#include "families/sinusoidal_forms.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "pe/api.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/harness/variant_rows.h"

namespace pe::harness::sinusoidal_family {

std::vector<double> census_timesteps(std::size_t n, double reach, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> t(n);
  const double last_whole = std::max(std::ceil(reach) - 1.0, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const auto drawn = static_cast<double>(static_cast<float>(u(rng) * reach));
    // Below 1 (flow matching's t) nothing is whole but 0. A single timestep is a fractional one: t = 0
    // alone (sin 0, cos 1) would pass a kernel that ignores the frequencies or the scale.
    const bool whole = reach > 1 && k % 2 == 0;
    if (n == 1)
      t[k] = drawn == 0 ? reach / 3 : drawn;
    else
      t[k] = k == 0 ? 0.0 : k == 1 && reach > 1 ? last_whole : whole ? std::floor(drawn) : drawn;
  }
  return t;
}

namespace {

struct TimestepSwitches {
  bool flip;
  double shift, scale;
};
// SD's UNet (flip_sin_to_cos True, freq_shift 0), get_timestep_embedding's defaults (shift 1), SD3/Flux
// (t in [0, 1) scaled by 1000 inside the embedding).
constexpr TimestepSwitches kTimestepSwitches[] = {{true, 0, 1}, {false, 1, 1}, {true, 0, 1000}};

void measure_form(const Instance& in, const SinusoidalParams& params, const std::vector<double>& t,
                  Measurement& m) {
  const SinusoidalRows rows = one_axis_rows(params, t);
  const TypedBuffer y = variant_rows(*in.variant, rows, in.dtype);
  Budget budget{&in.contract(), in.dtype};
  budget.real_scale = rows_real_scale(rows);
  measure_sinusoidal_rows(rows, y, budget, into(m));
}

}  // namespace

void census_forms(const Instance& in, std::int64_t limit, std::uint64_t seed, const census::Options& options,
                  Measurement& m) {
  if (!in.contract().table_switches) return;
  const bool full = options.effort == census::Effort::Full;
  const std::vector<std::size_t> counts =
      full ? std::vector<std::size_t>{1, 16, 256, 4096} : std::vector<std::size_t>{1, 16};
  const std::vector<std::int64_t> dims =
      full ? std::vector<std::int64_t>{256, 320, 1280} : std::vector<std::int64_t>{256, 1280};
  const double reach = std::min(1000.0, static_cast<double>(limit));
  for (const TimestepSwitches& s : kTimestepSwitches) {
    for (std::int64_t dim : dims) {
      for (std::size_t n : counts) {
        SinusoidalParams params{dim, 10000.0, in.layout};
        params.flip_sin_to_cos = s.flip;
        params.downscale_freq_shift = s.shift;
        params.scale = s.scale;
        measure_form(in, params, census_timesteps(n, reach / s.scale, seed ^ (n * 31 + dim)), m);
      }
    }
  }
  SinusoidalParams odd{321, 10000.0, in.layout};
  odd.downscale_freq_shift = 1;
  measure_form(in, odd, census_timesteps(16, reach, seed ^ 321), m);
}

namespace {

class TimestepWorkload : public Workload {
 public:
  TimestepWorkload(const Instance& in, const BenchShape& s)
      : in_(in),
        params_(sd_unet(s.dim, in.layout)),
        plan_(params_),
        timesteps_(census_timesteps(static_cast<std::size_t>(s.length), 1000.0, 0x7157)),
        out_(in.dtype, s.elements()) {
    elements = s.elements();
    bytes_written = bytes_moved = elements * size_of(in.dtype);
  }
  void run() override { sinusoidal_table_at(*in_.variant, plan_, timesteps_, out_.view()); }
  void check(const Sink& sink) override {
    run();
    const std::size_t n = timesteps_.size(), d = plan_.dim();
    std::vector<double> t, y;
    for (std::size_t r : {std::size_t{0}, n / 2, n - 1}) {
      t.push_back(timesteps_[r]);
      for (std::size_t c = 0; c < d; ++c) y.push_back(out_.get(r * d + c));
    }
    const SinusoidalRows rows = one_axis_rows(params_, t);
    Budget budget{&in_.contract(), in_.dtype};
    budget.real_scale = rows_real_scale(rows);
    measure_sinusoidal_rows(rows, y, budget, sink);
  }
  const void* data() const override { return &out_; }

 private:
  static SinusoidalParams sd_unet(std::int64_t dim, Layout layout) {
    SinusoidalParams p{dim, 10000.0, layout};
    p.flip_sin_to_cos = true;
    return p;
  }
  Instance in_;
  SinusoidalParams params_;
  SinusoidalPlan plan_;
  std::vector<double> timesteps_;
  TypedBuffer out_;
};

}  // namespace

std::unique_ptr<Workload> timestep_workload(const Instance& in, const BenchShape& shape) {
  return std::make_unique<TimestepWorkload>(in, shape);
}

}  // namespace pe::harness::sinusoidal_family
