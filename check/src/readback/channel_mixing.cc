#include "readback/channel_mixing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "readback/rotation_angles.h"

namespace pe::check {
namespace {

struct Fit2 {
  double a = 0, b = 0, residual = INFINITY;  // residual: relative to |y_c| over the heads
  bool ok = false;
};

// y_c over the heads of token t by least squares on (x_i, x_j), within `tol` of |y_c| (relative).
Fit2 fit_two(const RopeData& d, std::size_t t, std::size_t c, std::size_t i, std::size_t j, double tol) {
  double sii = 0, sjj = 0, sij = 0, siy = 0, sjy = 0, syy = 0;
  for (std::size_t h = 0; h < d.batch.heads; ++h) {
    const std::size_t row = d.batch.row(t, h);
    const double xi = d.x[row + i], xj = d.x[row + j], y = d.y[row + c];
    sii += xi * xi, sjj += xj * xj, sij += xi * xj, siy += xi * y, sjy += xj * y, syy += y * y;
  }
  const double det = sii * sjj - sij * sij;
  if (!(det > 1e-12 * sii * sjj) || !std::isfinite(det)) return {};
  Fit2 f{(siy * sjj - sjy * sij) / det, (sjy * sii - siy * sij) / det, INFINITY, false};
  double rr = 0;
  for (std::size_t h = 0; h < d.batch.heads; ++h) {
    const std::size_t row = d.batch.row(t, h);
    const double r = d.y[row + c] - f.a * d.x[row + i] - f.b * d.x[row + j];
    rr += r * r;
  }
  f.residual = std::sqrt(rr) / std::max(std::sqrt(syy), 1e-300);
  f.ok = std::isfinite(rr) && f.residual <= tol;
  return f;
}

}  // namespace

namespace {

bool reads(const MixedChannel& m, std::size_t k) {
  return std::find(m.frequencies.begin(), m.frequencies.end(), k) != m.frequencies.end();
}

// Screening: each input channel's squared correlation with y_c over the heads, summed over the tokens;
// [c][k], rotary channels relative to r0.
std::vector<double> screening_scores(const RopeData& d, std::size_t r0, std::size_t rd,
                                     const std::vector<std::size_t>& tokens) {
  std::vector<double> score(rd * rd, 0.0);
  for (std::size_t t : tokens) {
    std::vector<double> xx(rd, 0.0), yy(rd, 0.0), xy(rd * rd, 0.0);
    for (std::size_t h = 0; h < d.batch.heads; ++h) {
      const std::size_t row = d.batch.row(t, h) + r0;
      for (std::size_t k = 0; k < rd; ++k) xx[k] += d.x[row + k] * d.x[row + k];
      for (std::size_t c = 0; c < rd; ++c) {
        const double y = d.y[row + c];
        yy[c] += y * y;
        for (std::size_t k = 0; k < rd; ++k) xy[c * rd + k] += y * d.x[row + k];
      }
    }
    for (std::size_t c = 0; c < rd; ++c)
      for (std::size_t k = 0; k < rd; ++k)
        if (xx[k] > 0 && yy[c] > 0) score[c * rd + k] += xy[c * rd + k] * xy[c * rd + k] / (xx[k] * yy[c]);
  }
  return score;
}

// The frequencies the fits' angles read: a = g·cos(pθ_k), b = ±g·sin(pθ_k) at every token, one sign
// throughout.
std::vector<std::size_t> frequencies_of(const RopeData& d, const RopePlan& plan,
                                        const std::vector<Fit2>& fits,
                                        const std::vector<std::size_t>& tokens) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < plan.n_pairs(); ++k) {
    const double w = plan.inv_freq()[k];
    for (const double sign : {1.0, -1.0}) {
      bool all = true;
      for (std::size_t u = 0; u < tokens.size() && all; ++u) {
        const auto p = static_cast<double>(d.batch.position(tokens[u]));
        all = std::fabs(wrapped_angle(std::atan2(sign * fits[u].b, fits[u].a) - p * w)) <=
              2 * angle_tolerance(p, w, d.unit);
      }
      if (all) {
        out.push_back(k);
        break;
      }
    }
  }
  return out;
}

// Output channel c (relative to r0): its own channel is the channel itself (the cosine's term) when some
// partner completes the fit, else the most correlated input; the partner is the channel that leaves the
// least residual at every token. A slow pair at small positions barely mixes: every partner fits, and the
// partner stays undetermined.
MixedChannel mix_channel(const RopeData& d, const RopePlan& plan, std::size_t c,
                         const std::vector<double>& score, const std::vector<std::size_t>& tokens,
                         double tol) {
  const std::size_t r0 = plan.rotary_offset(), rd = plan.rotary_dim();
  MixedChannel m{r0 + c, std::nullopt, std::nullopt, {}};
  std::size_t most = 0;
  for (std::size_t k = 1; k < rd; ++k)
    if (score[c * rd + k] > score[c * rd + most]) most = k;
  std::vector<Fit2> fits;
  double least = INFINITY;
  std::size_t own = c, partner = rd, passing = 0;
  for (std::size_t attempt = 0; attempt < 2 && partner == rd; ++attempt) {
    if (attempt == 1 && most == c) break;
    own = attempt == 0 ? c : most;
    for (std::size_t k = 0; k < rd; ++k) {
      if (k == own) continue;
      std::vector<Fit2> f;
      double total = 0;
      for (std::size_t t : tokens) {
        f.push_back(fit_two(d, t, r0 + c, r0 + own, r0 + k, tol));
        if (!f.back().ok) break;
        total += f.back().residual;
      }
      if (f.size() != tokens.size() || !f.back().ok) continue;
      ++passing;
      if (total < least) least = total, partner = k, fits = std::move(f);
    }
  }
  if (partner == rd) return m;
  m.own = r0 + own;
  if (passing == 1) m.partner = r0 + partner;
  m.frequencies = frequencies_of(d, plan, fits, tokens);
  return m;
}

// The given layout's pairing and table: each output channel's inputs and pair.
bool pairing_as_given(const ChannelMixing& out, const RopePlan& plan) {
  const std::size_t r0 = plan.rotary_offset();
  for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
    const auto [i0, i1] = plan.input_channels(j);
    for (const std::size_t o : {plan.output_channels(j).first, plan.output_channels(j).second}) {
      const MixedChannel& m = out.channels[o - r0];
      if (!(m.own && reads(m, j) && (*m.own == i0 || *m.own == i1) &&
            (!m.partner || std::set<std::size_t>{*m.own, *m.partner} == std::set<std::size_t>{i0, i1})))
        return false;
    }
  }
  return true;
}

// Every channel is its own input mixed with one partner (or a slow pair that barely turned, consistent with
// any pairing), and `pred(c, partner, m)` holds of each paired one.
template <class Pred>
bool every_pair(const ChannelMixing& out, std::size_t r0, Pred&& pred) {
  return std::all_of(out.channels.begin(), out.channels.end(), [&](const MixedChannel& m) {
    if (*m.own != m.channel) return false;
    if (!m.partner) return true;
    return pred(m.channel - r0, *m.partner - r0, m);
  });
}

// Which pairs the channels form: "" when no description fits.
std::string pairing_words(const ChannelMixing& out, std::size_t r0, std::size_t rd) {
  const std::size_t half = rd / 2;
  if (every_pair(out, r0, [&](std::size_t c, std::size_t p, const MixedChannel&) { return p == (c ^ 1); }))
    return "interleaved pairs (c with c^1)";
  if (every_pair(out, r0,
                 [&](std::size_t c, std::size_t p, const MixedChannel&) { return p == (c + half) % rd; }))
    return fmt::format("half-split pairs (c with c ± {}: rotate_half)", half);
  if (!every_pair(out, r0, [&](std::size_t c, std::size_t p, const MixedChannel&) {
        return !out.channels[p].partner || *out.channels[p].partner - r0 == c;
      }))
    return "";
  std::string pairing = "pairs no layout uses: ";
  std::size_t shown = 0;
  for (const MixedChannel& m : out.channels) {
    if (!m.partner || *m.partner < m.channel || shown == 4) continue;
    pairing += fmt::format("{}({}, {})", shown++ ? ", " : "", m.channel, *m.partner);
  }
  return pairing + fmt::format(", … ({} pairs: a fixed permutation of the channels)", half);
}

// Which cos/sin table the channels read.
std::string table_words(const ChannelMixing& out, std::size_t r0, std::size_t rd) {
  const std::size_t half = rd / 2;
  const auto every = [&](auto&& pred) {  // every channel's frequency, paired or not
    return std::all_of(out.channels.begin(), out.channels.end(),
                       [&](const MixedChannel& m) { return pred(m.channel - r0, m); });
  };
  if (every([&](std::size_t c, const MixedChannel& m) { return reads(m, c / 2); }))
    return "cos and sin read interleaved (channel c at θ_{c/2})";
  if (every([&](std::size_t c, const MixedChannel& m) { return reads(m, c % half); }))
    return fmt::format("cos and sin read half-split (channel c at θ_(c mod {}))", half);
  if (every_pair(out, r0, [&](std::size_t, std::size_t p, const MixedChannel& m) {
        return std::any_of(m.frequencies.begin(), m.frequencies.end(),
                           [&](std::size_t k) { return reads(out.channels[p], k); });
      }))
    return "each pair at one frequency";
  return "the two channels of a pair at different frequencies";
}

}  // namespace

ChannelMixing recover_channel_mixing(const RopeData& d, const RopePlan& plan, std::size_t max_tokens) {
  ChannelMixing out;
  const std::size_t n = d.batch.tokens(), heads = d.batch.heads, r0 = plan.rotary_offset(),
                    rd = plan.rotary_dim();
  if (heads < 4 || rd < 4 || n < 2) return out;
  std::vector<std::size_t> tokens;
  for (std::size_t t = 0, step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, max_tokens));
       t < n && tokens.size() < max_tokens; t += step)
    tokens.push_back(t);
  out.tokens = tokens.size();
  out.heads = heads;
  const std::vector<double> score = screening_scores(d, r0, rd, tokens);
  const double tol = 2 * angle_tolerance(0, 0, d.unit);  // the residual of a rotation off by that angle
  std::size_t determined = 0;
  for (std::size_t c = 0; c < rd; ++c) {
    out.channels.push_back(mix_channel(d, plan, c, score, tokens, tol));
    if (!out.channels.back().frequencies.empty()) ++determined;
  }
  out.support = fmt::format(
      "{} of {} rotated channels determined over {} tokens x {} heads: each one's two input channels by "
      "least "
      "squares at every token, its angle there within tolerance of one frequency",
      determined, rd, out.tokens, heads);
  const auto paired = static_cast<std::size_t>(std::count_if(
      out.channels.begin(), out.channels.end(), [](const MixedChannel& m) { return m.partner.has_value(); }));
  if (pairing_as_given(out, plan) || determined < rd || 2 * paired < rd) return out;
  const std::string pairing = pairing_words(out, r0, rd);
  if (pairing.empty()) return out;
  const std::string table = table_words(out, r0, rd);
  const bool half_pairs = pairing.rfind("half-split", 0) == 0,
             interleaved_pairs = pairing.rfind("interleaved", 0) == 0;
  const bool interleaved_table = table.find("interleaved") != std::string::npos,
             half_table = table.find("half-split") != std::string::npos;
  // The given layout's own pairing with no other table's reads: the pairing is as given and the angles are
  // the frequencies' to explain (frequency recovery), not a pairing's.
  const Layout layout = plan.params().layout;
  if ((layout == Layout::HalfSplit && half_pairs && !interleaved_table) ||
      (layout == Layout::Interleaved && interleaved_pairs && !half_table))
    return out;
  out.words = fmt::format("channels mixed in {}, {}", pairing, table);
  if (half_pairs && interleaved_table) out.words += ": rotate_half against an interleaved cos/sin table";
  if (interleaved_pairs && half_table)
    out.words += ": interleaved pairs against a half-split (cat(freqs, freqs)) cos/sin table";
  out.words += fmt::format(" (given: {})", to_string(plan.params().layout));
  out.fits = true;
  return out;
}

}  // namespace pe::check
