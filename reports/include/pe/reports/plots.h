// SVG plots drawn by gnuplot from data files written beside them (the .dat and .gp stay in the
// report folder, so a plot can be redrawn or restyled by hand).
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pe/reports/bench_results.h"

namespace pe::reports {

// Writes `text` to `path`; throws std::runtime_error where it cannot.
void write_file(const std::string& path, const std::string& text);
// Whether a gnuplot that can write SVG is on PATH.
bool gnuplot_available();

// Each returns the SVG file names written into `dir` (empty when there was nothing to plot).
// Error against position (log-log), one panel per variant (f32 instance in its first layout), with
// the budget at the worst element of each band.
std::vector<std::string> plot_accuracy(const nlohmann::json& census, const std::string& dir);
// Time per call, fraction of the fill limit and bytes per call against sequence length (tokens).
std::vector<std::string> plot_speed(const std::vector<BenchRecord>& bench, const std::string& dir);
// Worst error against ns/element per variant, the Pareto front marked.
std::vector<std::string> plot_pareto(const nlohmann::json& census, const std::vector<BenchRecord>& bench,
                                     const std::string& dir);

// A label's box in pixels (y up), and whether it sits away from its point (a leader line joins them).
struct LabelBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool leader = false;
};
// The Pareto plot's label metrics at font 8 in gnuplot's SVG (pixels; generous, so that boxes that
// do not touch here do not touch drawn).
inline constexpr double kLabelCharWidth = 6.0, kLabelHeight = 11.0;
// Places a label of chars[i] characters beside each point (pixels, in order: earlier ones first),
// each box covering no point's marker and no earlier label; a label of 0 characters only marks its
// point as an obstacle. Boxes stay within `bounds` where they can.
std::vector<LabelBox> place_labels(const std::vector<std::array<double, 2>>& points,
                                   const std::vector<std::size_t>& chars, double char_w, double char_h,
                                   const LabelBox& bounds = {-1e300, -1e300, 1e300, 1e300});

// The variants on the Pareto front of (ns/element, error): no other is both faster and more accurate.
std::vector<std::string> pareto_front(
    const std::vector<std::pair<std::string, std::pair<double, double>>>& points);

}  // namespace pe::reports
