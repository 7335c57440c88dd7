#include "pe/reports/plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include "pe/harness/family_traits.h"
#include "pe/reports/variant_summary.h"

namespace pe::reports {
namespace {

constexpr const char* kTerminal =
    "set terminal svg size {},{} dynamic enhanced font 'sans,11' background rgb 'white'\n";

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

bool run_gnuplot(const std::string& dir, const std::string& script) {
  const std::string cmd = fmt::format("cd '{}' && gnuplot '{}' 2> '{}.log'", dir, script, script);
  return std::system(cmd.c_str()) == 0;
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
    gp +=
        "set key top left font ',8'\nset xlabel 'position (band end)' font ',9'\nset yrange [1e-12:10]\n"
        "set xrange [100:1e10]\n";
    for (const Primary& p : ps) {
      const std::string dat = fmt::format("accuracy_{}.dat", p.variant);
      std::string data = "# band_end max_abs p99_abs budget_at_max\n";
      for (const auto& b : (*p.instance)["bands"]) {
        data += fmt::format("{} {:.6g} {:.6g} {:.6g}\n", b.value("hi", std::int64_t{0}) + 1,
                            on_log(b["max_abs"].value("value", 0.0)), on_log(b.value("p99_abs", 0.0)),
                            on_log(b.value("budget_at_max_abs", 0.0)));
      }
      write(dir + "/" + dat, data);
      gp += fmt::format("set title '{}' noenhanced font ',10'\n", p.variant);
      gp += fmt::format(
          "plot '{0}' u 1:2 w lp pt 7 ps 0.5 lc rgb '#c0392b' t 'max', '{0}' u 1:3 w l lc rgb '#e59866' "
          "t 'p99', '{0}' u 1:4 w l dt 2 lw 2 lc rgb '#2c3e50' t 'budget'\n",
          dat);
    }
    gp += "unset multiplot\n";
    const std::string script = fmt::format("accuracy_{}.gp", family);
    write(dir + "/" + script, gp);
    if (run_gnuplot(dir, script)) svgs.push_back(svg);
  }
  return svgs;
}

std::vector<std::string> plot_speed(const std::vector<BenchRecord>& bench, const std::string& dir) {
  std::vector<std::string> svgs;
  for (const harness::FamilyTraits* traits : harness::family_traits()) {
    const std::string family(traits->name);
    // Per instance in its first layout seen: f32, positions from 0, the family's headline shape.
    // Per variant, the instance with the most such shapes (the largest table is timed in the
    // first layout only).
    std::map<std::string, std::map<std::string, std::vector<const BenchRecord*>>> by_instance;
    for (const BenchRecord& b : bench) {
      if (!traits->headline(b) || b.dtype != "f32" || b.positions != "start" || b.scaling != "none" ||
          b.form != "text" || !b.error.empty())
        continue;
      by_instance[b.variant][b.instance].push_back(&b);
    }
    std::map<std::string, std::vector<const BenchRecord*>> series;
    for (auto& [v, instances] : by_instance) {
      for (auto& [inst, recs] : instances) {
        if (recs.size() > series[v].size()) series[v] = recs;
      }
    }
    std::erase_if(series, [](const auto& s) { return s.second.size() < 2; });
    if (series.empty()) continue;
    const std::string svg = fmt::format("speed_{}.svg", family);
    std::string gp = fmt::format(fmt::runtime(kTerminal), 1300, 420);
    gp += fmt::format("set output '{}'\nset logscale xy\nset key outside right font ',8' noenhanced\n", svg);
    gp += fmt::format("set multiplot layout 1,3 title '{}: f32, positions from 0, {} (medians)'\n", family,
                      traits->caption);
    const std::string_view x = traits->length_label;
    std::string plot_time = "plot ", plot_fill = "plot ", plot_mem = "plot ";
    for (auto& [v, recs] : series) {
      std::sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->length < b->length; });
      const std::string dat = fmt::format("speed_{}.dat", v);
      std::string data = "# length time_us fill_fraction bytes_per_call peak_heap_bytes\n";
      for (const BenchRecord* b : recs) {
        const double elements = static_cast<double>(b->length * b->dim * std::max<std::int64_t>(1, b->heads));
        data += fmt::format("{} {:.6g} {:.6g} {:.6g} {:.6g}\n", b->length, b->real_time_ns / 1e3,
                            b->fill_fraction, elements * 4 + std::max(0.0, b->peak_heap_bytes),
                            std::max(0.0, b->peak_heap_bytes));
      }
      write(dir + "/" + dat, data);
      const std::string sep = plot_time == "plot " ? "" : ", ";
      plot_time += fmt::format("{}'{}' u 1:2 w lp pt 7 ps 0.4 t '{}'", sep, dat, v);
      plot_fill += fmt::format("{}'{}' u 1:($3*100) w lp pt 7 ps 0.4 t '{}'", sep, dat, v);
      plot_mem += fmt::format("{}'{}' u 1:4 w lp pt 7 ps 0.4 t '{}'", sep, dat, v);
    }
    gp += fmt::format(
        "set xlabel '{}'\nset ylabel 'time per call (us)'\nset title 'latency'\nset key off\n{}\n", x,
        plot_time);
    gp += fmt::format(
        "unset logscale y\nset ylabel '% of the fill limit (same bytes)'\nset title 'throughput'\n{}\n",
        plot_fill);
    gp += fmt::format(
        "set logscale y\nset ylabel 'bytes per call (output + heap)'\nset title 'memory'\nset key "
        "outside right\n{}\n",
        plot_mem);
    gp += "unset multiplot\n";
    const std::string script = fmt::format("speed_{}.gp", family);
    write(dir + "/" + script, gp);
    if (run_gnuplot(dir, script)) svgs.push_back(svg);
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

std::vector<std::string> plot_pareto(const nlohmann::json& census, const std::vector<BenchRecord>& bench,
                                     const std::string& dir) {
  std::vector<std::string> svgs;
  for (const harness::FamilyTraits* traits : harness::family_traits()) {
    const std::string family(traits->name);
    std::vector<std::pair<std::string, std::pair<double, double>>> points;
    for (const Primary& p : primaries(census, family)) {
      const std::string inst = p.instance->value("instance", "");
      const BenchRecord* b = representative(bench, inst.substr(0, inst.find('/')));
      if (b == nullptr) continue;
      double err = 0;
      for (const auto& band : (*p.instance)["bands"]) {
        if (band.value("hi", std::int64_t{0}) < 1'000'000)
          err = std::max(err, band["max_abs"].value("value", 0.0));
      }
      points.push_back({p.variant, {b->ns_per_element, on_log(err)}});
    }
    if (points.size() < 2) continue;
    const auto front = pareto_front(points);
    std::string data = "# ns_per_element max_abs_error_below_1e6 on_front name\n", front_data = data;
    auto sorted = points;
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    for (const auto& [name, p] : sorted) {
      const bool on = std::find(front.begin(), front.end(), name) != front.end();
      const std::string line = fmt::format("{:.6g} {:.6g} {} {}\n", p.first, p.second, on ? 1 : 0, name);
      data += line;
      if (on) front_data += line;
    }
    const std::string dat = fmt::format("pareto_{}.dat", family), svg = fmt::format("pareto_{}.svg", family);
    const std::string front_dat = fmt::format("pareto_{}_front.dat", family);
    write(dir + "/" + dat, data);
    write(dir + "/" + front_dat, front_data);
    std::string gp = fmt::format(fmt::runtime(kTerminal), 900, 600);
    gp += fmt::format("set output '{}'\nset termoption noenhanced\nset logscale xy\nset format y '1e%T'\n",
                      svg);
    gp += fmt::format("set title '{}: accuracy against speed (f32; error at positions < 1e6; speed at {})'\n",
                      family, traits->summary_caption);
    gp += "set xlabel 'ns per element (median)'\nset ylabel 'max |y - exact|'\nset key top right\n";
    gp += fmt::format(
        "plot '{0}' u 1:($3==0?$2:1/0) w p pt 6 ps 1.2 lc rgb '#7f8c8d' t 'dominated', "
        "'{1}' u 1:2 w lp pt 7 ps 1.4 lc rgb '#c0392b' t 'Pareto front', "
        "'{0}' u 1:2:4 w labels noenhanced offset 0.8,0.6 left font ',8' notitle\n",
        dat, front_dat);
    const std::string script = fmt::format("pareto_{}.gp", family);
    write(dir + "/" + script, gp);
    if (run_gnuplot(dir, script)) svgs.push_back(svg);
  }
  return svgs;
}

}  // namespace pe::reports
