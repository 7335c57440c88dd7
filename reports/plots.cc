#include "pe/reports/plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include "pe/harness/family_traits.h"
#include "pe/reports/measured.h"
#include "pe/reports/variant_summary.h"

namespace pe::reports {
namespace {

constexpr const char* kTerminal =
    "set terminal svg size {},{} dynamic enhanced font 'sans,11' background rgb 'white'\n";

// Writes the script `script` (in `dir`) and runs it; whether gnuplot succeeded.
bool run_gnuplot(const std::string& dir, const std::string& script, const std::string& gp) {
  write_file(dir + "/" + script, gp);
  const std::string cmd = fmt::format("cd '{}' && gnuplot '{}' 2> '{}.log'", dir, script, script);
  return std::system(cmd.c_str()) == 0;
}

// Text for a single-quoted string in gnuplot's enhanced mode, shown as written ("head_dim" is no subscript).
std::string enhanced_literal(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~') out += '\\';
    out += c;
  }
  return out;
}

// Errors of 0 cannot sit on a log axis: they are drawn at the floor.
constexpr double kFloor = 1e-12;
double on_log(double v) { return std::max(v, kFloor); }

struct Primary {
  std::string variant;
  const nlohmann::json* instance;
};

std::vector<Primary> primaries(const nlohmann::json& census, const std::string& family) {
  std::vector<Primary> out;
  for (const auto& inst : census) {
    if (inst.value("family", "") != family || inst.value("dtype", "") != "f32") continue;
    const std::string v = inst.value("variant", "");
    if (std::none_of(out.begin(), out.end(), [&](const Primary& p) { return p.variant == v; }))
      out.push_back({v, &inst});
  }
  return out;
}

}  // namespace

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

bool gnuplot_available() { return std::system("gnuplot -e \"set terminal svg\" >/dev/null 2>&1") == 0; }

std::vector<std::string> plot_accuracy(const nlohmann::json& census, const std::string& dir) {
  std::vector<std::string> svgs;
  for (const harness::FamilyTraits* traits : harness::family_traits()) {
    const std::string family(traits->name);
    const auto ps = primaries(census, family);
    if (ps.empty()) continue;
    const int cols = std::min<int>(4, static_cast<int>(ps.size()));
    const int rows = (static_cast<int>(ps.size()) + cols - 1) / cols;
    std::string gp = fmt::format(fmt::runtime(kTerminal), 330 * cols, 270 * rows + 40);
    const std::string svg = fmt::format("accuracy_{}.svg", family);
    gp += fmt::format(
        "set output '{}'\nset logscale xy\nset format x '10^{{%T}}'\nset format y '10^{{%T}}'\n", svg);
    gp += fmt::format(
        "set multiplot layout {},{} title '{}: max |y - exact| per position band (f32 output), "
        "budget dashed; exact 0 drawn at 1e-12'\n",
        rows, cols, family);
    // The y range reaches the family's largest plotted value (ALiBi's biases, and so its errors and
    // budgets, grow with the distance far past 10), a decade above it.
    double top = 10;
    for (const Primary& p : ps) {
      for (const auto& b : (*p.instance)["bands"])
        for (const double v : {measured_or(b["max_abs"], "value", NAN), measured_or(b, "p99_abs", NAN),
                               measured_or(b, "budget_at_max_abs", NAN)})
          if (std::isfinite(v)) top = std::max(top, std::pow(10.0, std::ceil(std::log10(v)) + 1));
    }
    gp += fmt::format(
        "set key top left font ',8'\nset xlabel 'position (band end)' font ',9'\nset yrange [1e-12:{:g}]\n"
        "set xrange [100:1e10]\n",
        top);
    for (const Primary& p : ps) {
      const std::string dat = fmt::format("accuracy_{}.dat", p.variant);
      std::string data = "# band_end max_abs p99_abs budget_at_max\n";
      for (const auto& b : (*p.instance)["bands"]) {
        data += fmt::format("{} {:.6g} {:.6g} {:.6g}\n", b.value("hi", std::int64_t{0}) + 1,
                            on_log(measured_or(b["max_abs"], "value", NAN)),
                            on_log(measured_or(b, "p99_abs", NAN)),
                            on_log(measured_or(b, "budget_at_max_abs", NAN)));
      }
      write_file(dir + "/" + dat, data);
      gp += fmt::format("set title '{}' noenhanced font ',10'\n", p.variant);
      gp += fmt::format(
          "plot '{0}' u 1:2 w lp pt 7 ps 0.5 lc rgb '#c0392b' t 'max', '{0}' u 1:3 w l lc rgb '#e59866' "
          "t 'p99', '{0}' u 1:4 w l dt 2 lw 2 lc rgb '#2c3e50' t 'budget'\n",
          dat);
    }
    gp += "unset multiplot\n";
    if (run_gnuplot(dir, fmt::format("accuracy_{}.gp", family), gp)) svgs.push_back(svg);
  }
  return svgs;
}

std::vector<std::string> plot_speed(const std::vector<BenchRecord>& bench, const std::string& dir) {
  std::vector<std::string> svgs;
  for (const harness::FamilyTraits* traits : harness::family_traits()) {
    const std::string family(traits->name);
    // Per instance in its first layout seen: f32, the family's headline shape, unscaled, positions
    // from 0, or from 2^20 at a length the run timed only there (quick mode times RoPE's T1 as the
    // decode shape at 2^20 only: without it RoPE had one point and no plot). Per variant, the instance
    // with the most lengths (the largest table is timed in the first layout only).
    std::map<std::string, std::map<std::string, std::map<std::int64_t, const BenchRecord*>>> by_instance;
    for (const BenchRecord& b : bench) {
      if (!traits->headline(b) || b.dtype != "f32" || (b.positions != "start" && b.positions != "far") ||
          b.scaling != "none" || b.form != "text" || b.threads != 1 || !b.error.empty())
        continue;
      const BenchRecord*& at = by_instance[b.variant][b.instance][b.length];
      if (at == nullptr || (at->positions != "start" && b.positions == "start")) at = &b;
    }
    std::map<std::string, std::vector<const BenchRecord*>> series;
    for (auto& [v, instances] : by_instance) {
      for (auto& [inst, by_length] : instances) {
        if (by_length.size() <= series[v].size()) continue;
        series[v].clear();
        for (const auto& [length, rec] : by_length) series[v].push_back(rec);
      }
    }
    std::erase_if(series, [](const auto& s) { return s.second.size() < 2; });
    if (series.empty()) continue;
    // Points without lines where a series has two lengths (quick mode): a line through two points draws
    // a trend nothing measured. The memory panel only where the series differ (else every line is the
    // output's own bytes, drawn once per variant on top of each other).
    bool lines = true, memory_differs = false, any_far = false;
    std::map<std::int64_t, double> bytes_at;
    for (const auto& [v, recs] : series) {
      lines = lines && recs.size() >= 3;
      for (const BenchRecord* b : recs) {
        const double bytes = std::max(0.0, b->peak_heap_bytes);
        const auto [at, fresh] = bytes_at.emplace(b->length, bytes);
        memory_differs = memory_differs || (!fresh && at->second != bytes);
        any_far = any_far || b->positions == "far";
      }
    }
    const std::string svg = fmt::format("speed_{}.svg", family);
    std::string gp = fmt::format(fmt::runtime(kTerminal), 1300, 420);
    gp += fmt::format("set output '{}'\nset logscale xy\nset key outside right font ',8' noenhanced\n", svg);
    gp += fmt::format("set multiplot layout 1,{} title '{}: f32, positions from 0{}, {} (medians){}'\n",
                      memory_differs ? 3 : 2, family,
                      any_far ? " (open circles: from 2^{20}, lengths timed only there)" : "",
                      enhanced_literal(traits->caption),
                      memory_differs ? "" : "; no heap allocated: bytes per call = output bytes");
    const std::string_view x = traits->length_label;
    const char* style = lines ? "lp" : "p";
    std::string plot_time = "plot ", plot_fill = "plot ", plot_mem = "plot ";
    for (auto& [v, recs] : series) {
      std::sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->length < b->length; });
      const std::string dat = fmt::format("speed_{}.dat", v);
      std::string data =
          "# length time_us fill_fraction bytes_per_call peak_heap_bytes point_type(7: from 0, 6: from "
          "2^20)\n";
      for (const BenchRecord* b : recs) {
        const double elements = static_cast<double>(b->length * b->dim * std::max<std::int64_t>(1, b->heads));
        data += fmt::format("{} {:.6g} {:.6g} {:.6g} {:.6g} {}\n", b->length, b->real_time_ns / 1e3,
                            b->fill_fraction, elements * 4 + std::max(0.0, b->peak_heap_bytes),
                            std::max(0.0, b->peak_heap_bytes), b->positions == "far" ? 6 : 7);
      }
      write_file(dir + "/" + dat, data);
      const std::string sep = plot_time == "plot " ? "" : ", ";
      plot_time += fmt::format("{}'{}' u 1:2:6 w {} pt variable ps 0.6 t '{}'", sep, dat, style, v);
      plot_fill += fmt::format("{}'{}' u 1:($3*100):6 w {} pt variable ps 0.6 t '{}'", sep, dat, style, v);
      plot_mem += fmt::format("{}'{}' u 1:4:6 w {} pt variable ps 0.6 t '{}'", sep, dat, style, v);
    }
    gp += fmt::format(
        "set xlabel '{}'\nset ylabel 'time per call (us)'\nset title 'latency'\nset key off\n{}\n", x,
        plot_time);
    gp += fmt::format(
        "unset logscale y\nset ylabel '% of the fill limit (same bytes)'\nset title 'throughput'\n{}{}\n",
        memory_differs ? "" : "set key outside right\n", plot_fill);
    if (memory_differs)
      gp += fmt::format(
          "set logscale y\nset ylabel 'bytes per call (output + heap)'\nset title 'memory'\nset key "
          "outside right\n{}\n",
          plot_mem);

    gp += "unset multiplot\n";
    if (run_gnuplot(dir, fmt::format("speed_{}.gp", family), gp)) svgs.push_back(svg);
  }
  return svgs;
}

std::vector<std::string> pareto_front(
    const std::vector<std::pair<std::string, std::pair<double, double>>>& points) {
  std::vector<std::string> front;
  for (const auto& [name, p] : points) {
    const bool dominated = std::any_of(points.begin(), points.end(), [&](const auto& q) {
      return q.second.first <= p.first && q.second.second <= p.second &&
             (q.second.first < p.first || q.second.second < p.second);
    });
    if (!dominated) front.push_back(name);
  }
  return front;
}

std::vector<LabelBox> place_labels(const std::vector<std::array<double, 2>>& points,
                                   const std::vector<std::size_t>& chars, double char_w, double char_h,
                                   const LabelBox& bounds) {
  constexpr double kMarker = 6;  // half a marker's width (ps 1.4), pixels
  const auto overlaps = [](const LabelBox& a, const LabelBox& b) {
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  };
  std::vector<LabelBox> obstacles, placed;
  for (const auto& p : points)
    obstacles.push_back({p[0] - kMarker, p[1] - kMarker, p[0] + kMarker, p[1] + kMarker});
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double w = char_w * static_cast<double>(chars[i]), h = char_h, gap = kMarker + 2;
    const double x = points[i][0], y = points[i][1];
    LabelBox chosen{};
    // Beside the point first (right, left, above, below), then further up and down in steps of a line:
    // the first box that covers no marker and no label placed before it.
    for (int step = 0; step < 64; ++step) {
      const int ring = step / 4;  // 0: beside; then a line up, a line down, two up, two down, ...
      const double shift = ring == 0 ? 0 : ((ring + 1) / 2) * (h + 2) * (ring % 2 == 1 ? 1 : -1);
      const LabelBox candidates[] = {{x + gap, y - h / 2 + shift, x + gap + w, y + h / 2 + shift},
                                     {x - gap - w, y - h / 2 + shift, x - gap, y + h / 2 + shift},
                                     {x - w / 2, y + gap + shift, x + w / 2, y + gap + h + shift},
                                     {x - w / 2, y - gap - h + shift, x + w / 2, y - gap + shift}};
      const LabelBox& c = candidates[step % 4];
      const bool inside = c.x0 >= bounds.x0 && c.x1 <= bounds.x1 && c.y0 >= bounds.y0 && c.y1 <= bounds.y1;
      const bool free = inside && std::none_of(obstacles.begin(), obstacles.end(),
                                               [&](const LabelBox& o) { return overlaps(c, o); });
      if (free || step == 63) {
        chosen = c;
        break;
      }
    }
    const double dx = std::max({chosen.x0 - x, 0.0, x - chosen.x1}),
                 dy = std::max({chosen.y0 - y, 0.0, y - chosen.y1});
    chosen.leader = std::hypot(dx, dy) > gap + 2;  // moved off the four places beside its point
    obstacles.push_back(chosen);
    placed.push_back(chosen);
  }
  return placed;
}

namespace {

// A variant on the Pareto plot: its name and (ns per element, max |y - exact| below position 1e6).
using ParetoPoint = std::pair<std::string, std::pair<double, double>>;

// The family's variants with both a census and a timing, as points; `lengths` collects the lengths
// their timings were taken at. A variant whose kernel wrote NaN has no place on the accuracy axis.
std::vector<ParetoPoint> pareto_points(const nlohmann::json& census, const std::vector<BenchRecord>& bench,
                                       const std::string& family, std::vector<std::int64_t>& lengths) {
  std::vector<ParetoPoint> points;
  for (const Primary& p : primaries(census, family)) {
    const std::string inst = p.instance->value("instance", "");
    const BenchRecord* b = representative(bench, inst.substr(0, inst.find('/')));
    if (b == nullptr) continue;
    double err = 0;
    for (const auto& band : (*p.instance)["bands"]) {
      if (band.value("hi", std::int64_t{0}) < 1'000'000) {
        const double e = measured_or(band["max_abs"], "value", NAN);
        err = std::isnan(e) || std::isnan(err) ? NAN : std::max(err, e);
      }
    }
    if (std::isnan(err)) continue;
    points.push_back({p.variant, {b->ns_per_element, on_log(err)}});
    if (std::find(lengths.begin(), lengths.end(), b->length) == lengths.end()) lengths.push_back(b->length);
  }
  return points;
}

bool on_front(const std::vector<std::string>& front, const std::string& name) {
  return std::find(front.begin(), front.end(), name) != front.end();
}

// The points (sorted by speed) as gnuplot data: every point to `all`, the front's also to `front_only`.
void write_pareto_data(const std::vector<ParetoPoint>& sorted, const std::vector<std::string>& front,
                       const std::string& all, const std::string& front_only) {
  std::string data = "# ns_per_element max_abs_error_below_1e6 on_front name\n", front_data = data;
  for (const auto& [name, p] : sorted) {
    const bool on = on_front(front, name);
    const std::string line = fmt::format("{:.6g} {:.6g} {} {}\n", p.first, p.second, on ? 1 : 0, name);
    data += line;
    if (on) front_data += line;
  }
  write_file(all, data);
  write_file(front_only, front_data);
}

// The plot's fixed size, margins and log ranges (whole decades around the points), so that a point's
// pixel is known here and its label can be placed (labels inside the axes, below the key's two rows).
struct ParetoFrame {
  static constexpr int kW = 900, kH = 600;
  static constexpr double kL = 0.10, kR = 0.97, kB = 0.10, kT = 0.90;
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;

  explicit ParetoFrame(const std::vector<ParetoPoint>& points) {
    for (const auto& [name, p] : points) {
      x_lo = std::min(x_lo, p.first), x_hi = std::max(x_hi, p.first);
      y_lo = std::min(y_lo, p.second), y_hi = std::max(y_hi, p.second);
    }
    x_lo = std::pow(10, std::floor(std::log10(x_lo) - 0.1)),
    x_hi = std::pow(10, std::ceil(std::log10(x_hi) + 0.3));
    y_lo = std::pow(10, std::floor(std::log10(y_lo) - 0.3)),
    y_hi = std::pow(10, std::ceil(std::log10(y_hi) + 0.5));
  }
  // A point's pixel, from the bottom left corner.
  std::array<double, 2> pixel(const std::pair<double, double>& p) const {
    return {px(p.first, x_lo, x_hi, kL, kR, kW), px(p.second, y_lo, y_hi, kB, kT, kH)};
  }
  LabelBox axes() const { return {kL * kW, kB * kH, kR * kW, kT * kH - 45}; }

 private:
  static double px(double v, double lo, double hi, double a, double b, int size) {
    return size * (a + (b - a) * (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)));
  }
};

// gnuplot labels naming the front's points, placed where they cover no marker and no other label
// (place_labels), with a leader line where one moved away from its point. The dominated variants are
// listed in report.md's table, not labelled (a dozen names over a cluster overprinted each other).
std::string pareto_labels(const std::vector<ParetoPoint>& sorted, const std::vector<std::string>& front,
                          const ParetoFrame& frame) {
  std::vector<std::array<double, 2>> at;
  std::vector<std::size_t> chars;
  std::vector<const ParetoPoint*> labelled;
  // The front first (they get the places nearest to their points), then every other marker as an obstacle.
  for (const auto& pt : sorted) {
    if (!on_front(front, pt.first)) continue;
    labelled.push_back(&pt);
    at.push_back(frame.pixel(pt.second));
    chars.push_back(pt.first.size());
  }
  const std::size_t n_front = at.size();
  for (const auto& pt : sorted) {
    if (on_front(front, pt.first)) continue;
    at.push_back(frame.pixel(pt.second));
    chars.push_back(0);
  }
  // The dominated points' labels are empty: their markers are obstacles only.
  const std::vector<LabelBox> boxes = place_labels(at, chars, kLabelCharWidth, kLabelHeight, frame.axes());
  constexpr int kW = ParetoFrame::kW, kH = ParetoFrame::kH;
  std::string gp;
  for (std::size_t k = 0; k < n_front; ++k) {
    const LabelBox& b = boxes[k];
    gp += fmt::format("set label {} '{}' at screen {:.5f}, screen {:.5f} left font ',8' front\n", k + 1,
                      labelled[k]->first, b.x0 / kW, (b.y0 + b.y1) / 2 / kH);
    if (b.leader) {
      const double lx = std::clamp(at[k][0], b.x0, b.x1), ly = std::clamp(at[k][1], b.y0, b.y1);
      gp += fmt::format(
          "set arrow {} from screen {:.5f}, screen {:.5f} to screen {:.5f}, screen {:.5f} nohead lw 0.5 lc "
          "rgb '#95a5a6'\n",
          k + 1, at[k][0] / kW, at[k][1] / kH, lx / kW, ly / kH);
    }
  }
  return gp;
}

// The script's setup: the SVG terminal and output, the frame's margins and ranges, title and axes.
std::string pareto_setup(const std::string& svg, const ParetoFrame& frame, const std::string& title) {
  std::string gp = fmt::format(fmt::runtime(kTerminal), ParetoFrame::kW, ParetoFrame::kH);
  gp +=
      fmt::format("set output '{}'\nset termoption noenhanced\nset logscale xy\nset format y '1e%T'\n", svg);
  gp += fmt::format(
      "set lmargin at screen {}\nset rmargin at screen {}\nset bmargin at screen {}\nset tmargin at screen "
      "{}\n",
      ParetoFrame::kL, ParetoFrame::kR, ParetoFrame::kB, ParetoFrame::kT);
  gp += fmt::format("set xrange [{:g}:{:g}]\nset yrange [{:g}:{:g}]\n", frame.x_lo, frame.x_hi, frame.y_lo,
                    frame.y_hi);
  gp += "set title '" + title + "'\n";
  gp += "set xlabel 'ns per element (median)'\nset ylabel 'max |y - exact|'\nset key top right\n";
  return gp;
}

}  // namespace

std::vector<std::string> plot_pareto(const nlohmann::json& census, const std::vector<BenchRecord>& bench,
                                     const std::string& dir) {
  std::vector<std::string> svgs;
  for (const harness::FamilyTraits* traits : harness::family_traits()) {
    const std::string family(traits->name);
    std::vector<std::int64_t> lengths;
    const std::vector<ParetoPoint> points = pareto_points(census, bench, family, lengths);
    if (points.size() < 2) continue;
    const auto front = pareto_front(points);
    auto sorted = points;
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    const std::string dat = fmt::format("pareto_{}.dat", family), svg = fmt::format("pareto_{}.svg", family);
    const std::string front_dat = fmt::format("pareto_{}_front.dat", family);
    write_pareto_data(sorted, front, dir + "/" + dat, dir + "/" + front_dat);
    const ParetoFrame frame(sorted);
    const std::string shape =
        lengths.size() == 1 ? shape_at(*traits, lengths[0]) : std::string(traits->summary_shape);
    std::string gp =
        pareto_setup(svg, frame,
                     fmt::format("{}: accuracy against speed (f32; error at positions < 1e6; speed at {}{})",
                                 family, shape, lengths.size() > 1 ? ", or the nearest length timed" : ""));
    gp += pareto_labels(sorted, front, frame);
    gp += fmt::format(
        "plot '{0}' u 1:($3==0?$2:1/0) w p pt 6 ps 1.2 lc rgb '#7f8c8d' t 'dominated (report.md lists "
        "them)', "
        "'{1}' u 1:2 w lp pt 7 ps 1.4 lc rgb '#c0392b' t 'Pareto front'\n",
        dat, front_dat);
    if (run_gnuplot(dir, fmt::format("pareto_{}.gp", family), gp)) svgs.push_back(svg);
  }
  return svgs;
}

}  // namespace pe::reports
