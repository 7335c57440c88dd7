#include "bench_results.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

namespace pe::reports {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

std::int64_t number_after(const std::string& s, char prefix) {
  if (s.empty() || s[0] != prefix) return 0;
  try {
    return std::stoll(s.substr(1));
  } catch (const std::exception&) {
    return 0;
  }
}

double field(const nlohmann::json& b, const char* key) {
  const auto it = b.find(key);
  return it != b.end() && it->is_number() ? it->get<double>() : NAN;
}

// sinusoidal/<instance>/<op>/<dtype>/L<n>/d<dim>/<positions>; rope/<instance>/<dtype>/T/H/D/<positions>
bool parse_name(BenchRecord& r) {
  const auto p = split(r.name, '/');
  if (p.size() == 7 && p[0] == "sinusoidal") {
    r.family = p[0], r.instance = p[1], r.op = p[2], r.dtype = p[3], r.positions = p[6];
    r.length = number_after(p[4], 'L');
    r.dim = number_after(p[5], 'd');
    return true;
  }
  if (p.size() == 7 && p[0] == "rope") {
    r.family = p[0], r.instance = p[1], r.op = "rope", r.dtype = p[2], r.positions = p[6];
    r.length = number_after(p[3], 'T');
    r.heads = number_after(p[4], 'H');
    r.dim = number_after(p[5], 'D');
    return true;
  }
  return false;
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

std::string variant_of(const std::string& instance) {
  const auto first = instance.find('.'), second = instance.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) return instance;
  return instance.substr(0, first) + instance.substr(second);
}

std::vector<BenchRecord> bench_records(const nlohmann::json& run) {
  if (!run.is_object() || !run.contains("benchmarks") || !run["benchmarks"].is_array())
    throw std::runtime_error("not a Google Benchmark JSON file (no \"benchmarks\" array)");
  std::map<std::string, std::vector<const nlohmann::json*>> reps;
  std::map<std::string, std::string> errors;
  std::vector<std::string> order;
  for (const auto& b : run["benchmarks"]) {
    const std::string name = b.value("run_name", b.value("name", ""));
    if (!reps.count(name) && !errors.count(name)) order.push_back(name);
    if (b.value("error_occurred", false)) {
      errors[name] = b.value("error_message", "error");
    } else if (b.value("run_type", "iteration") == "iteration") {
      reps[name].push_back(&b);
    }
  }
  std::vector<BenchRecord> out;
  for (const std::string& name : order) {
    BenchRecord r;
    r.name = name;
    if (!parse_name(r)) continue;  // limits/ and anything else
    if (errors.count(name)) {
      r.error = errors[name];
      out.push_back(r);
      continue;
    }
    const auto& rs = reps[name];
    const auto med = [&](const char* key) {
      std::vector<double> v;
      for (const auto* b : rs) v.push_back(field(*b, key));
      return median(v);
    };
    r.repetitions = rs.size();
    r.real_time_ns = med("real_time");
    const std::string unit = rs.empty() ? "ns" : rs.front()->value("time_unit", "ns");
    r.real_time_ns *= unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 1.0;
    r.ns_per_element = med("ns_per_element");
    r.fill_fraction = med("fill_fraction");
    r.copy_fraction = med("copy_fraction");
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
