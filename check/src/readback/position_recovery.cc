#include "readback/position_recovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>

#include "pe/half.h"
#include "readback/rotation_angles.h"
#include "readback/row_index_pattern.h"

namespace pe::check {
namespace {

struct PairAngle {
  double theta = 0, phi = 0, weight = 0;  // weight: |x_pair|, 0 when the pair carries nothing
};

double tolerance(const PairAngle& a, double p, double unit, bool float32_angle) {
  return angle_tolerance(p, a.theta, unit, float32_angle);
}

// wrapped_angle without the library's rounding call (|a| < 2^62), for a screen with a margin: a tie may go
// either way.
double quick_wrapped_angle(double a) {
  const double turns = a * (1 / kFullTurn);
  return a - kFullTurn * static_cast<double>(static_cast<std::int64_t>(turns + (turns < 0 ? -0.5 : 0.5)));
}

constexpr std::size_t kMaxIntervals = std::size_t{1} << 18;

}  // namespace

std::vector<RecoveredRow> recover_positions(const RopeData& d, const RopePlan& plan,
                                            const std::vector<std::size_t>& tokens, std::int64_t max_position,
                                            std::int64_t min_position) {
  std::vector<SampledRow> rows;
  for (const std::size_t t : tokens) rows.push_back({t, 0});
  return recover_positions(d, plan, rows, max_position, min_position);
}

std::vector<RecoveredRow> recover_positions(const RopeData& d, const RopePlan& plan,
                                            const std::vector<SampledRow>& rows, std::int64_t max_position,
                                            std::int64_t min_position) {
  std::vector<RecoveredRow> out;
  for (const auto [t, h] : rows) {
    const std::size_t row = d.batch.row(t, h);
    std::vector<PairAngle> angles;
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const auto [i0, i1] = plan.input_channels(j);
      const auto [o0, o1] = plan.output_channels(j);
      const double x0 = d.x[row + i0], x1 = d.x[row + i1], y0 = d.y[row + o0], y1 = d.y[row + o1];
      const double norm = std::hypot(x0, x1);
      if (!(norm > 1e-3) || !std::isfinite(y0) || !std::isfinite(y1)) continue;
      angles.push_back({plan.inv_freq()[j], rotation_angle(x0, x1, y0, y1), norm});
    }
    RecoveredRow r{t, std::nullopt, h};
    if (angles.size() < 2) {
      out.push_back(r);
      continue;
    }
    std::sort(angles.begin(), angles.end(),
              [](const PairAngle& a, const PairAngle& b) { return a.theta < b.theta; });
    bool f32 = false;  // first an accurate angle; then, if no position fits, a float32 one
    const auto fits = [&](std::int64_t p) {
      for (const PairAngle& a : angles) {
        if (std::fabs(wrapped_angle(a.phi - static_cast<double>(p) * a.theta)) >
            tolerance(a, static_cast<double>(p), d.unit, f32))
          return false;
      }
      return true;
    };
    // Sieve, slowest pair first: each pair keeps the parts of the interval where its angle fits (one
    // part per turn), until an interval is narrow enough to test its integers. Two positions found, or
    // an interval no remaining pair can narrow, leave the row undetermined.
    // A budget of intervals: when even the slowest pair turns millions of times over the range (a base
    // near 1), the sieve would enumerate them all; the row is then undetermined, in bounded time.
    std::vector<std::int64_t> found;
    std::size_t visits = 0;
    const auto narrow = [&](auto&& self, double lo, double hi, std::size_t k) -> void {
      if (found.size() >= 2) return;
      if (++visits > kMaxIntervals) {
        found.assign(2, -1);
        return;
      }
      if (hi - lo < 4) {
        for (auto p = static_cast<std::int64_t>(std::ceil(lo));
             p <= static_cast<std::int64_t>(std::floor(hi)); ++p) {
          if (p >= min_position && p <= max_position && fits(p) &&
              std::find(found.begin(), found.end(), p) == found.end())
            found.push_back(p);
        }
        return;
      }
      if (k == angles.size()) {
        found.assign(2, -1);  // wide, and nothing left to narrow it: undetermined
        return;
      }
      const PairAngle& a = angles[k];
      const double tol = tolerance(a, hi, d.unit, f32);
      if (tol >= std::numbers::pi) return self(self, lo, hi, k + 1);
      const double first = std::floor((lo * a.theta - a.phi - tol) / kFullTurn);
      const double last = std::ceil((hi * a.theta - a.phi + tol) / kFullTurn);
      // A part strictly inside [lo, hi] (every m but the first two and last two) is entered only where the
      // next pair's angle can fit somewhere in it; one where it cannot is counted as the visit it would have
      // been (the same positions found, the same budget spent, without the call and its divisions). The next
      // pair's tolerance at the larger |p| of this interval bounds the one it would use; the margin covers
      // the rounding of the phase and of the center taken by a multiplication (once it exceeds π, as at
      // phases past 2^48 rad, nothing is screened out).
      const PairAngle* next = k + 1 < angles.size() ? &angles[k + 1] : nullptr;
      const double half = tol / a.theta, inv_theta = 1 / a.theta;
      const double next_reach =
          next ? std::max(tolerance(*next, hi, d.unit, f32), tolerance(*next, lo, d.unit, f32)) +
                     half * next->theta + 1e-6
               : INFINITY;
      for (double m = first; m <= last && found.size() < 2; ++m) {
        if (next_reach < std::numbers::pi && m > first + 1 && m < last - 1) {
          const double c = (a.phi + kFullTurn * m) * inv_theta * next->theta;
          if (std::fabs(quick_wrapped_angle(next->phi - c)) > next_reach + 0x1p-46 * std::fabs(c)) {
            if (++visits > kMaxIntervals) found.assign(2, -1);
            continue;
          }
        }
        const double center = (a.phi + kFullTurn * m) / a.theta;
        const double nlo = std::max(lo, center - half), nhi = std::min(hi, center + half);
        if (nlo <= nhi) self(self, nlo, nhi, k + 1);
      }
    };
    const auto from = static_cast<double>(min_position), to = static_cast<double>(max_position);
    narrow(narrow, from, to, 0);
    if (found.empty()) {
      f32 = true;
      visits = 0;
      narrow(narrow, from, to, 0);
    }
    if (found.size() == 1) r.position = found[0];
    out.push_back(r);
  }
  return out;
}

namespace {
// Every row off by one constant `delta`: an offset dropped or added. Read back from 0 where the given
// positions start at p0 is what a step run without its offset computes.
std::string offset_words(const RopeBatch& b, std::int64_t delta) {
  const std::int64_t least =
      *std::min_element(b.positions.begin(), b.positions.begin() + static_cast<std::ptrdiff_t>(b.tokens()));
  const std::string dropped =
      delta == -least ? fmt::format(
                            "an offset dropped: positions counted from 0 where the given ones start at {} "
                            "(the decode offset, or the KV cache's length, dropped)",
                            least)
                      : "an offset dropped (a decode step's or the KV cache's)";
  return fmt::format("every row rotated by p{:+} (positions recovered from the data): {}", delta,
                     delta < 0 ? dropped : "an offset added twice, or positions counted from a later start");
}

std::string pattern_words(const RopeData& d, const std::vector<RecoveredRow>& rows) {
  std::vector<std::pair<std::size_t, std::int64_t>> offsets;  // (token, recovered - given)
  std::size_t undetermined = 0, zero = 0;
  for (const RecoveredRow& r : rows) {
    if (!r.position) {
      ++undetermined;
      continue;
    }
    offsets.push_back({r.token, *r.position - d.batch.position(r.token)});
    zero += *r.position == 0 ? 1 : 0;
  }
  const std::string tail =
      undetermined == 0 ? ""
                        : fmt::format(" ({} of {} sampled rows undetermined)", undetermined, rows.size());
  if (offsets.empty()) return rows.empty() ? "" : fmt::format("positions undetermined{}", tail);
  if (zero == offsets.size() &&
      std::any_of(offsets.begin(), offsets.end(), [](const auto& o) { return o.second != 0; }))
    return decode_step(d.batch)
               ? "every row rotated by position 0: the rows were not rotated, or the decode offset "
                 "dropped (every step at position 0)"
               : "every row rotated by position 0: the rows were not rotated";
  // int64 positions read as int32 (two's complement: from 2^31 on they wrap to negative ones), or as
  // uint32 (the low 32 bits).
  const auto every_row = [&](auto narrowed) {
    return std::any_of(offsets.begin(), offsets.end(), [](const auto& o) { return o.second != 0; }) &&
           std::all_of(offsets.begin(), offsets.end(), [&](const auto& o) {
             const std::int64_t given = d.batch.position(o.first);
             return given + o.second == narrowed(given);
           });
  };
  if (every_row([](std::int64_t p) { return static_cast<std::int64_t>(static_cast<std::int32_t>(p)); })) {
    const auto example =
        std::find_if(offsets.begin(), offsets.end(), [](const auto& o) { return o.second != 0; });
    const std::int64_t given = d.batch.position(example->first);
    return fmt::format("positions truncated to 32 bits{} (int64 position ids read as int32: {} read as {})",
                       given + example->second < 0 ? ", wrapping to negative ones" : "", given,
                       given + example->second);
  }
  if (every_row([](std::int64_t p) { return static_cast<std::int64_t>(static_cast<std::uint32_t>(p)); }))
    return "positions truncated to 32 bits (int64 position ids read as uint32: their low 32 bits)";
  // Position ids built in the data's 16-bit type (torch.arange(..., dtype=x.dtype)): each rounded to it.
  for (const DType t : {DType::BF16, DType::F16}) {
    const auto rounded = [t](std::int64_t p) {
      const auto v = static_cast<double>(p);
      return t == DType::BF16 ? static_cast<double>(to_float(to_bfloat16(v)))
                              : static_cast<double>(to_float(to_float16(v)));
    };
    const auto example =
        std::find_if(offsets.begin(), offsets.end(), [](const auto& o) { return o.second != 0; });
    if (example != offsets.end() && std::all_of(offsets.begin(), offsets.end(), [&](const auto& o) {
          const std::int64_t given = d.batch.position(o.first);
          return static_cast<double>(given + o.second) == rounded(given);
        })) {
      const std::int64_t given = d.batch.position(example->first);
      return fmt::format("positions rounded to {} (position ids built in the data's type: {} read as {})",
                         t == DType::BF16 ? "bfloat16" : "float16", given, given + example->second);
    }
  }
  std::map<std::int64_t, std::size_t> counts;
  for (const auto& o : offsets) ++counts[o.second];
  if (counts.size() == 1) {
    const std::int64_t delta = counts.begin()->first;
    return delta == 0 ? "" : offset_words(d.batch, delta);
  }
  // Consecutive positions where the given ones restart or repeat: one cache_position (arange) for a
  // left-padded or packed batch.
  const std::int64_t first =
      rows.front().position ? *rows.front().position - static_cast<std::int64_t>(rows.front().token) : 0;
  const bool consecutive =
      rows.front().position && std::all_of(rows.begin(), rows.end(), [&](const RecoveredRow& r) {
        return r.position && *r.position - static_cast<std::int64_t>(r.token) == first;
      });
  if (consecutive) {
    return fmt::format(
        "the rows were rotated by consecutive positions {}, {}, ... where the given ones restart or "
        "repeat: one cache_position for a left-padded or packed batch",
        first, first + 1);
  }
  // Offsets constant over runs of rows: a packed batch whose positions restart (or do not) per sequence.
  std::string runs;
  std::int64_t last = offsets.front().second;
  std::size_t changes = 0;
  for (const auto& [token, delta] : offsets) {
    if (delta == last) continue;
    ++changes;
    if (changes <= 3) runs += fmt::format("{}from token {}: p{:+}", runs.empty() ? "" : ", ", token, delta);
    last = delta;
  }
  if (changes <= 3) {
    return fmt::format(
        "the rows' positions are off by offsets that change between runs of rows (p{:+} first, then "
        "{}): sequences of a packed batch with offsets not reset (or reset) at their boundaries",
        offsets.front().second, runs);
  }
  return fmt::format(
      "the rows' recovered positions follow no offset pattern ({} distinct offsets in {} rows){}",
      counts.size(), offsets.size(), tail);
}
}  // namespace

namespace {
// One row per sampled token: the position its heads' determined rows agree on (nullopt where none is
// determined); `disagree` counts the tokens whose heads read back different ones.
std::vector<RecoveredRow> by_token(const std::vector<RecoveredRow>& rows, std::size_t& disagree) {
  std::map<std::size_t, std::vector<std::int64_t>> found;
  for (const RecoveredRow& r : rows) {
    auto& f = found[r.token];
    if (r.position) f.push_back(*r.position);
  }
  std::vector<RecoveredRow> out;
  disagree = 0;
  for (const auto& [token, positions] : found) {
    const bool agree = std::all_of(positions.begin(), positions.end(),
                                   [&](std::int64_t p) { return p == positions.front(); });
    disagree += agree ? 0 : 1;
    out.push_back({token, positions.empty() || !agree ? std::nullopt : std::optional(positions.front())});
  }
  return out;
}
}  // namespace

PositionPattern position_pattern(const RopeData& d, const std::vector<RecoveredRow>& rows) {
  PositionPattern out;
  std::size_t determined = 0;
  std::set<std::size_t> tokens, heads;
  for (const RecoveredRow& r : rows) {
    determined += r.position ? 1 : 0;
    tokens.insert(r.token);
    heads.insert(r.head);
  }
  out.support = fmt::format(
      "{} of {} sampled rows determined ({} token{} x {} head{}), every determined one agreeing", determined,
      rows.size(), tokens.size(), tokens.size() == 1 ? "" : "s", heads.size(), heads.size() == 1 ? "" : "s");
  if (std::optional<std::string> index = row_index_pattern(d, rows)) {
    out.words = std::move(*index);
    out.fits = out.row_index = true;
    return out;
  }
  std::size_t disagree = 0;
  const std::vector<RecoveredRow> per_token = by_token(rows, disagree);
  if (disagree > 0) {
    out.words = fmt::format(
        "the heads of {} of {} sampled tokens read back different positions, in none of the (token, head) "
        "patterns named: undetermined",
        disagree, tokens.size());
    return out;
  }
  out.words = pattern_words(d, per_token);
  const bool described = out.words.rfind("positions undetermined", 0) != 0 &&
                         out.words.find("follow no offset pattern") == std::string::npos;
  out.fits = !out.words.empty() && described && 2 * determined > rows.size();
  return out;
}

namespace {
// Every axis of token t at position 0: the rotation is the identity there, so an unchanged row says nothing.
bool at_position_zero(const RopeBatch& b, std::size_t t) {
  for (std::size_t a = 0; a < b.n_axes; ++a)
    if (b.position(t, a) != 0) return false;
  return true;
}
}  // namespace

bool decode_step(const RopeBatch& b) {
  const std::size_t n = b.tokens();
  if (n == 0 || n > 16) return false;
  bool run = n > 1;
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t a = 0; a < b.n_axes; ++a)
      if (b.position(t, a) <= 0) return false;
    run = run && b.position(t) == b.position(0) + static_cast<std::int64_t>(t);
  }
  return !run;
}

bool left_unrotated(const RopeData& d, const RopePlan& plan, std::size_t t, std::size_t h) {
  if (at_position_zero(d.batch, t)) return false;
  // The whole row: rotary channels rotated elsewhere (at the start instead of the end) are not this.
  const std::size_t row = d.batch.row(t, h);
  for (std::size_t ch = 0; ch < d.head_dim; ++ch) {
    if (d.x[row + ch] != d.y[row + ch]) return false;
  }
  return plan.rotary_dim() > 0;
}

UnrotatedRows unrotated_rows(const RopeData& d, const RopePlan& plan) {
  UnrotatedRows u;
  for (std::size_t t = 0; t < d.batch.tokens(); ++t) {
    if (at_position_zero(d.batch, t)) continue;
    u.rows += d.batch.heads;
    for (std::size_t h = 0; h < d.batch.heads; ++h) {
      if (!left_unrotated(d, plan, t, h)) continue;
      if (u.count++ == 0) {
        u.token = t;
        u.head = h;
        u.position = d.batch.position(t);
      }
    }
  }
  u.decode_offset = u.count > 0 && u.count == u.rows && decode_step(d.batch);
  return u;
}

std::string unrotated_words(const UnrotatedRows& u, bool only_cause) {
  if (u.count == u.rows)
    return fmt::format(
        "every row holds its input unchanged: the data was not rotated (RoPE skipped, or the layer run as a "
        "NoPE layer){}",
        u.decode_offset ? "; or, in this decode step, the decode offset dropped (every step at position 0)"
                        : "");
  return fmt::format(
      "{} of {} rows hold their input unchanged though their positions are not 0 "
      "(first: token {}, head {}, position {}): rows left unrotated (a fast path skipped them){}",
      u.count, u.rows, u.token, u.head, u.position, only_cause ? "; every other row is within budget" : "");
}

}  // namespace pe::check
