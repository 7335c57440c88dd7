#include "readback/axis_recovery.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "readback/rotation_angles.h"

namespace pe::check {
namespace {

// Whether pair j of every sampled row agrees with axis a: (agrees, some row tells a apart from another axis).
struct AxisVote {
  bool fits = true, tells = false;
};

}  // namespace

RecoveredAxes recover_axes(const RopeData& d, const RopePlan& plan, std::size_t max_tokens) {
  RecoveredAxes out;
  const std::size_t pairs = plan.n_pairs(), axes = d.batch.n_axes, n = d.batch.tokens();
  out.axis.assign(pairs, std::nullopt);
  out.fitting.assign(pairs, 0);
  if (plan.params().form.mrope_section.empty() || axes < 2 || axes != plan.n_axes() || n == 0) return out;
  out.n_axes = axes;
  out.heads = d.batch.heads;
  const std::size_t step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, max_tokens));
  std::vector<std::size_t> tokens;
  for (std::size_t t = 0; t < n && tokens.size() < max_tokens; t += step) tokens.push_back(t);
  out.tokens = tokens.size();
  out.apart.assign(axes * axes, 0);
  for (const std::size_t t : tokens)
    for (std::size_t a = 0; a < axes; ++a)
      for (std::size_t b = 0; b < axes; ++b)
        out.apart[a * axes + b] = std::max<std::int64_t>(
            out.apart[a * axes + b], std::llabs(d.batch.position(t, a) - d.batch.position(t, b)));
  for (std::size_t j = 0; j < pairs; ++j) {
    const double theta = plan.inv_freq()[j];
    const auto [i0, i1] = plan.input_channels(j);
    const auto [o0, o1] = plan.output_channels(j);
    std::vector<AxisVote> votes(axes);
    bool any = false;
    for (const std::size_t t : tokens) {
      for (std::size_t h = 0; h < d.batch.heads; ++h) {
        const std::size_t row = d.batch.row(t, h);
        const double x0 = d.x[row + i0], x1 = d.x[row + i1], y0 = d.y[row + o0], y1 = d.y[row + o1];
        if (!(std::hypot(x0, x1) > 1e-3) || !std::isfinite(y0) || !std::isfinite(y1)) continue;
        any = true;
        const double phi = rotation_angle(x0, x1, y0, y1);
        for (std::size_t a = 0; a < axes; ++a) {
          const auto p = static_cast<double>(d.batch.position(t, a));
          const double tol = angle_tolerance(p, theta, d.unit);
          if (std::fabs(wrapped_angle(phi - p * theta)) > tol) votes[a].fits = false;
          for (std::size_t b = 0; b < axes; ++b) {
            const auto q = static_cast<double>(d.batch.position(t, b));
            const double apart = std::fabs(wrapped_angle((p - q) * theta));
            if (b != a && apart > 2 * (tol + angle_tolerance(q, theta, d.unit))) votes[a].tells = true;
          }
        }
      }
    }
    if (!any) continue;
    std::optional<std::size_t> only;
    std::size_t fitting = 0;
    for (std::size_t a = 0; a < axes; ++a)
      if (votes[a].fits) ++fitting, only = a, out.fitting[j] |= 1u << a;
    if (fitting == 1 && votes[*only].tells) out.axis[j] = only, ++out.determined;
  }
  return out;
}

}  // namespace pe::check
