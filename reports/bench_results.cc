#include "pe/reports/bench_results.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace pe::reports {
namespace {

double field(const nlohmann::json& b, const char* key) {
  const auto it = b.find(key);
  return it != b.end() && it->is_number() ? it->get<double>() : NAN;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

nlohmann::json parse_benchmark_json(const std::string& text, const std::string& what) {
  std::string clean;
  clean.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
    if (!in_string) {
      bool replaced = false;
      for (const char* word : {"-nan", "-NaN", "NaN", "nan", "-inf", "inf", "-Infinity", "Infinity"}) {
        const std::size_t n = std::char_traits<char>::length(word);
        if (text.compare(i, n, word) == 0) {
          clean += "null";
          i += n - 1;
          replaced = true;
          break;
        }
      }
      if (replaced) continue;
    }
    clean += c;
  }
  try {
    return nlohmann::json::parse(clean);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(what + " is not JSON: " + e.what());
  }
}

std::vector<BenchRuns> benchmark_runs(const nlohmann::json& run) {
  if (!run.is_object() || !run.contains("benchmarks") || !run["benchmarks"].is_array())
    throw std::runtime_error("not a Google Benchmark JSON file (no \"benchmarks\" array)");
  std::vector<BenchRuns> out;
  std::map<std::string, std::size_t> index;
  for (const auto& b : run["benchmarks"]) {
    const std::string name = b.value("run_name", b.value("name", ""));
    auto [it, fresh] = index.emplace(name, out.size());
    if (fresh) out.push_back({name, std::nullopt, {}, ""});
    BenchRuns& r = out[it->second];
    const std::string label = b.value("label", "");
    if (!r.identity && !label.empty()) {
      try {
        r.identity = harness::identity_from_label(label);
      } catch (const std::exception& e) {
        throw std::runtime_error("benchmark " + name +
                                 ": its label is not a benchmark identity: " + e.what());
      }
    }
    if (b.value("error_occurred", false)) {
      r.error = b.value("error_message", "error");
    } else if (b.value("run_type", "iteration") == "iteration") {
      r.repetitions.push_back(&b);
    }
  }
  return out;
}

std::vector<FloorRecord> floor_records(const nlohmann::json& run) {
  std::vector<FloorRecord> out;
  for (const BenchRuns& runs : benchmark_runs(run)) {
    if (!runs.name.starts_with("floor/") || !runs.error.empty()) continue;
    const auto med = [&](const char* key) {
      std::vector<double> v;
      for (const auto* b : runs.repetitions) v.push_back(field(*b, key));
      return median(v);
    };
    out.push_back({runs.name, med("ns_per_element"), med("fill_fraction")});
  }
  return out;
}

double ns_per(const std::string& unit) {
  return unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 1.0;
}

std::vector<BenchRecord> bench_records(const nlohmann::json& run) {
  std::vector<BenchRecord> out;
  for (const BenchRuns& runs : benchmark_runs(run)) {
    if (!runs.identity) continue;  // limits/, plan/: context, not kernels
    BenchRecord r;
    static_cast<harness::BenchIdentity&>(r) = *runs.identity;
    r.name = runs.name;
    if (!runs.error.empty()) {
      r.error = runs.error;
      out.push_back(r);
      continue;
    }
    const auto& rs = runs.repetitions;
    const auto med = [&](const char* key) {
      std::vector<double> v;
      for (const auto* b : rs) v.push_back(field(*b, key));
      return median(v);
    };
    r.repetitions = rs.size();
    r.real_time_ns = med("real_time") * ns_per(rs.empty() ? "ns" : rs.front()->value("time_unit", "ns"));
    r.ns_per_element = med("ns_per_element");
    std::vector<double> per_element;
    for (const auto* b : rs) per_element.push_back(field(*b, "ns_per_element"));
    const auto [lo, hi] = std::minmax_element(per_element.begin(), per_element.end());
    if (per_element.size() >= 2) r.spread = (*hi - *lo) / r.ns_per_element;
    r.fill_fraction = med("fill_fraction");
    r.copy_fraction = med("copy_fraction");
    r.fill_limit_streams = med("fill_limit_streams") > 0.5;
    r.max_abs_error = med("max_abs_error");
    r.error_over_budget = med("error_over_budget");
    const double allocs = med("allocs_per_call"), peak = med("peak_heap_bytes_per_call");
    r.allocs_per_call = std::isnan(allocs) ? -1 : allocs;
    r.peak_heap_bytes = std::isnan(peak) ? -1 : peak;
    out.push_back(r);
  }
  return out;
}

}  // namespace pe::reports
