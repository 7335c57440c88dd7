#include "pe/harness/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace pe::sweep {
namespace {

// How bad a property test's result is: a test run by several shards keeps its worst.
int rank(const std::string& result) {
  if (result == "skipped") return 0;
  if (result == "passed") return 1;
  return 2;
}

std::pair<std::size_t, std::size_t> shard_of_document(const nlohmann::json& d) {
  const std::string shard = d.value("shard", "");
  std::size_t index = 0, count = 0;
  if (std::sscanf(shard.c_str(), "%zu/%zu", &index, &count) != 2 || count == 0 || index >= count)
    throw std::runtime_error("a sweep document's shard is not I/N with I < N: '" + shard + "'");
  return {index, count};
}

std::string config_name(const std::string& config) { return config.empty() ? "(no config)" : config; }

double worst_ratio(const nlohmann::json& instance) {
  double worst = 0;
  for (const auto& b : instance.value("bands", nlohmann::json::array())) {
    const double r = b.value("max_budget_ratio", nlohmann::json::object()).value("value", 0.0);
    worst = std::isnan(r) ? r : std::max(worst, r);
    if (std::isnan(worst)) break;
  }
  return worst;
}

// A table cell: no '|' or line break of a message may end it.
std::string cell(std::string text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|')
      out += "\\|";
    else
      out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

std::string instance_verdict(const nlohmann::json& instance) {
  if (instance.contains("fault")) return "fault";
  return instance.value("within_contract", false) ? "within" : "outside";
}

}  // namespace

nlohmann::json document(const Header& h, const std::vector<nlohmann::json>& census_documents,
                        const std::vector<PropertyVerdict>& properties) {
  nlohmann::json d = {{"schema", kSchema},
                      {"variant", h.variant},
                      {"effort", h.effort},
                      {"max_position", h.max_position},
                      {"configs", h.configs},
                      {"plugins", h.plugins},
                      {"shard", fmt::format("{}/{}", h.shard_index, h.shard_count)},
                      {"census", census_documents}};
  if (h.properties) {
    d["seed"] = h.seed;
    nlohmann::json tests = nlohmann::json::object();
    for (const PropertyVerdict& v : properties) {
      tests[v.test] = {{"result", v.result}};
      if (!v.message.empty()) tests[v.test]["message"] = v.message;
    }
    d["properties"] = tests;
  }
  return d;
}

nlohmann::json merge(const std::vector<nlohmann::json>& shards) {
  if (shards.empty()) throw std::runtime_error("no sweep document to merge");
  for (const auto& s : shards) {
    if (!s.is_object() || s.value("schema", "") != kSchema || !s.contains("census") ||
        !s["census"].is_array())
      throw std::runtime_error(std::string("not a pe-suite sweep document (schema ") + kSchema + ")");
  }
  const nlohmann::json& first = shards.front();
  const std::size_t count = shard_of_document(first).second;
  std::vector<int> seen(count, 0);
  for (const auto& s : shards) {
    for (const char* key : {"variant", "effort", "max_position", "configs", "plugins", "seed"}) {
      if (s.value(key, nlohmann::json()) != first.value(key, nlohmann::json()))
        throw std::runtime_error(fmt::format("sweep documents of different runs: their {} differ ({} and {})",
                                             key, first.value(key, nlohmann::json()).dump(),
                                             s.value(key, nlohmann::json()).dump()));
    }
    if (s.contains("properties") != first.contains("properties"))
      throw std::runtime_error("sweep documents of different runs: some ran the properties, some did not");
    const auto [index, n] = shard_of_document(s);
    if (n != count)
      throw std::runtime_error(
          fmt::format("sweep documents of different splits: shards of {} and of {}", count, n));
    if (++seen[index] > 1) throw std::runtime_error(fmt::format("shard {}/{} is given twice", index, count));
    if (s["census"].size() != s["configs"].size())
      throw std::runtime_error(fmt::format("shard {}/{} holds {} census documents for {} configs", index,
                                           count, s["census"].size(), s["configs"].size()));
  }
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < count; ++i)
    if (seen[i] == 0) missing.push_back(fmt::format("{}/{}", i, count));
  if (!missing.empty())
    throw std::runtime_error(fmt::format(
        "shard{} {} {} missing: no file given holds {} (resubmit {})", missing.size() == 1 ? "" : "s",
        fmt::join(missing, ", "), missing.size() == 1 ? "is" : "are", missing.size() == 1 ? "it" : "them",
        missing.size() == 1 ? "that array task" : "those array tasks"));

  nlohmann::json out = first;
  out["shard"] = "merged";
  out["merged_from"] = count;
  for (std::size_t c = 0; c < first["configs"].size(); ++c) {
    nlohmann::json census = first["census"][c];
    std::vector<nlohmann::json> instances;
    for (const auto& s : shards) {
      const nlohmann::json& part = s["census"][c];
      if (part.value("config", "") != first["configs"][c].get<std::string>())
        throw std::runtime_error("a shard's census documents are not in the order of its configs");
      for (const auto& i : part.value("instances", nlohmann::json::array())) instances.push_back(i);
    }
    std::sort(instances.begin(), instances.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a.value("instance", "") < b.value("instance", "");
    });
    for (std::size_t k = 1; k < instances.size(); ++k) {
      if (instances[k].value("instance", "") == instances[k - 1].value("instance", ""))
        throw std::runtime_error(fmt::format("instance {} under config {} appears in two shards",
                                             instances[k].value("instance", ""),
                                             config_name(first["configs"][c].get<std::string>())));
    }
    census["shard"] = "merged";
    census["instances"] = instances;
    out["census"][c] = census;
  }
  if (first.contains("properties")) {
    nlohmann::json tests = nlohmann::json::object();
    for (const auto& s : shards) {
      for (const auto& [name, verdict] : s["properties"].items()) {
        if (!tests.contains(name) ||
            rank(verdict.value("result", "")) > rank(tests[name].value("result", "")))
          tests[name] = verdict;
      }
    }
    out["properties"] = tests;
  }
  return out;
}

nlohmann::json verdicts(const nlohmann::json& merged) {
  nlohmann::json census = nlohmann::json::object();
  for (const auto& c : merged.value("census", nlohmann::json::array())) {
    nlohmann::json& mine = census[c.value("config", "")];
    mine = nlohmann::json::object();
    for (const auto& i : c.value("instances", nlohmann::json::array()))
      mine[i.value("instance", "")] = instance_verdict(i);
  }
  nlohmann::json properties = nlohmann::json::object();
  const nlohmann::json tests = merged.value("properties", nlohmann::json::object());  // outlives items()
  for (const auto& [name, verdict] : tests.items()) properties[name] = verdict.value("result", "");
  return {{"census", census}, {"properties", properties}};
}

std::string markdown(const nlohmann::json& merged) {
  const nlohmann::json& configs = merged["configs"];
  std::string md = fmt::format(
      "## Sweep\n\n{} model config{} x the instances of `{}` ({} effort{}){}{}.\n\n"
      "| config | instances | within their contracts | outside | fault |\n|---|---|---|---|---|\n",
      configs.size(), configs.size() == 1 ? "" : "s", merged.value("variant", ""), merged.value("effort", ""),
      merged.value("max_position", 0) > 0 ? fmt::format(", positions to {}", merged.value("max_position", 0))
                                          : "",
      merged["plugins"].empty() ? "" : fmt::format(", plugins {}", fmt::join(merged["plugins"], ", ")),
      merged.contains("merged_from")
          ? fmt::format(", merged from {} shards", merged["merged_from"].get<int>())
          : "");
  std::string tables;
  for (const auto& c : merged["census"]) {
    std::map<std::string, int> counts;
    std::string rows;
    for (const auto& i : c["instances"]) {
      const std::string v = instance_verdict(i);
      ++counts[v];
      rows += fmt::format("| `{}` | {} | {:.3g} |{}\n", i.value("instance", ""),
                          v == "within"  ? "within"
                          : v == "fault" ? "**FAULT**"
                                         : "**OUTSIDE**",
                          worst_ratio(i),
                          i.contains("fault") ? " " + cell(i["fault"].get<std::string>()) + " |" : " |");
    }
    const std::string name = config_name(c.value("config", ""));
    md += fmt::format("| `{}` | {} | {} | {} | {} |\n", name, c["instances"].size(), counts["within"],
                      counts["outside"], counts["fault"]);
    tables += fmt::format(
        "\n### `{}`\n\nRoPE scaling `{}`.\n\n| instance | verdict | max err/budget | fault "
        "|\n|---|---|---|---|\n{}",
        name, c.value("rope_scaling", nlohmann::json::object()).dump(), rows);
  }
  md += tables;
  if (merged.contains("properties")) {
    std::map<std::string, int> counts;
    std::string failing;
    for (const auto& [name, verdict] : merged["properties"].items()) {
      const std::string r = verdict.value("result", "");
      ++counts[r];
      if (rank(r) == 2)
        failing += fmt::format(
            "- `{}`: {}{}\n", name, r,
            verdict.contains("message") ? ": " + cell(verdict["message"].get<std::string>()) : "");
    }
    md += fmt::format(
        "\n### Properties\n\nSeed {}: {} passed, {} skipped, {} not passed.\n\n{}",
        merged.value("seed", std::uint64_t{0}), counts["passed"], counts["skipped"],
        merged["properties"].size() - static_cast<std::size_t>(counts["passed"] + counts["skipped"]),
        failing);
  }
  return md;
}

}  // namespace pe::sweep
