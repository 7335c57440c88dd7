#include "pe/harness/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "pe/harness/census.h"

namespace pe::sweep {
namespace {

// How bad a property test's result is: a test run by several shards keeps its worst (ties: the lower
// shard's).
int rank(const std::string& result) {
  constexpr std::string_view kOrder[] = {"skipped", "passed", "failed", "hung"};  // then crashed, or unknown
  return static_cast<int>(std::find(std::begin(kOrder), std::end(kOrder), result) - std::begin(kOrder));
}

// The document's fields with the types merge() reads, else std::runtime_error naming the file and the field.
void check_fields(const nlohmann::json& d, const std::string& source) {
  const auto refuse = [&](const std::string& what) {
    throw std::runtime_error(fmt::format("{}: {}", source, what));
  };
  if (!d.is_object() || d.value("schema", "") != kSchema)
    refuse(std::string("not a pe-suite sweep document (schema ") + kSchema + ")");
  for (const char* key : {"variant", "effort", "shard"})
    if (!d.contains(key) || !d[key].is_string()) refuse(std::string("\"") + key + "\" is not a string");
  if (!d.contains("max_position") || !d["max_position"].is_number_integer())
    refuse("\"max_position\" is not an integer");
  for (const char* key : {"configs", "plugins"}) {
    if (!d.contains(key) || !d[key].is_array() ||
        !std::all_of(d[key].begin(), d[key].end(), [](const nlohmann::json& v) { return v.is_string(); }))
      refuse(std::string("\"") + key + "\" is not a list of strings");
  }
  if (!d.contains("census") || !d["census"].is_array() || d["census"].size() != d["configs"].size())
    refuse("\"census\" is not one census document per config");
  for (const auto& c : d["census"]) {
    if (!c.is_object() || !c.contains("instances") || !c["instances"].is_array())
      refuse("a census document without its \"instances\" list");
    for (const auto& i : c["instances"])
      if (!i.is_object() || !i.contains("instance") || !i["instance"].is_string() ||
          (i.contains("fault") && !i["fault"].is_string()))
        refuse("an instance without its name (or with a fault that is not text)");
  }
  if (d.contains("properties")) {
    if (!d["properties"].is_object() || !d.contains("seed") || !d["seed"].is_number_integer() ||
        d["seed"].get<std::int64_t>() < 0)
      refuse("\"properties\" without an object of tests and an unsigned \"seed\"");
    for (const auto& [name, v] : d["properties"].items())
      if (!v.is_object() || !v.contains("result") || !v["result"].is_string() ||
          (v.contains("message") && !v["message"].is_string()))
        refuse("property test " + name + " has no \"result\" text");
  }
}

std::pair<std::size_t, std::size_t> shard_of_document(const nlohmann::json& d, const std::string& source) {
  const auto parsed = census::parse_shard(d["shard"].get<std::string>());
  if (!parsed)
    throw std::runtime_error(fmt::format("{}: shard '{}' is not I/N with I < N <= {}", source,
                                         d["shard"].get<std::string>(), census::kMaxShards));
  return *parsed;
}

std::string config_name(const std::string& config) { return config.empty() ? "(no config)" : config; }

double worst_ratio(const nlohmann::json& instance) {
  double worst = 0;
  for (const auto& b : instance.value("bands", nlohmann::json::array())) {
    // NaN is written as null: a ratio that is not a number is NaN, the worst there is.
    const nlohmann::json v =
        b.value("max_budget_ratio", nlohmann::json::object()).value("value", nlohmann::json());
    const double r = v.is_number() ? v.get<double>() : std::nan("");
    worst = std::isnan(r) ? r : std::max(worst, r);
    if (std::isnan(worst)) break;
  }
  return worst;
}

// A table cell: no '|' or line break of a message may end it.
std::string cell(std::string text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? "\\|" : std::string(1, ch == '\n' ? ' ' : ch);
  return out;
}

std::string instance_verdict(const nlohmann::json& instance) {
  if (instance.contains("fault")) return "fault";
  return instance.value("within_contract", false) ? "within" : "outside";
}

}  // namespace

nlohmann::json document(const Header& h, const std::vector<nlohmann::json>& census_documents,
                        const std::vector<PropertyVerdict>& properties) {
  nlohmann::json d = {
      {"schema", kSchema},         {"variant", h.variant},
      {"effort", h.effort},        {"max_position", h.max_position},
      {"configs", h.configs},      {"plugins", h.plugins},
      {"selection", h.selection},  {"shard", fmt::format("{}/{}", h.shard_index, h.shard_count)},
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

namespace {

// The given documents in shard order, each checked against the first (the same run, the same split, each
// shard once, none missing), so that what the merge keeps of equal results does not depend on the order
// given.
std::vector<const nlohmann::json*> shards_in_order(const std::vector<nlohmann::json>& given,
                                                   const std::vector<std::string>& sources) {
  if (given.empty()) throw std::runtime_error("no sweep document to merge");
  const auto source = [&](std::size_t k) {
    return k < sources.size() ? sources[k] : fmt::format("document {}", k + 1);
  };
  for (std::size_t k = 0; k < given.size(); ++k) check_fields(given[k], source(k));
  std::map<std::size_t, std::size_t> by_index;  // shard index -> position in `given`
  const std::size_t count = shard_of_document(given.front(), source(0)).second;
  for (std::size_t k = 0; k < given.size(); ++k) {
    const nlohmann::json& s = given[k];
    for (const char* key : {"variant", "effort", "max_position", "configs", "plugins", "seed", "selection"}) {
      if (s.value(key, nlohmann::json()) != given.front().value(key, nlohmann::json()))
        throw std::runtime_error(fmt::format(
            "{} and {} are of different runs: their {} differ ({} and {})", source(0), source(k), key,
            given.front().value(key, nlohmann::json()).dump(), s.value(key, nlohmann::json()).dump()));
    }
    if (s.contains("properties") != given.front().contains("properties"))
      throw std::runtime_error(fmt::format(
          "{} and {} are of different runs: one ran the properties, one did not", source(0), source(k)));
    const auto [index, n] = shard_of_document(s, source(k));
    if (n != count)
      throw std::runtime_error(fmt::format("{} and {} are of different splits: shards of {} and of {}",
                                           source(0), source(k), count, n));
    if (!by_index.emplace(index, k).second)
      throw std::runtime_error(fmt::format("shard {}/{} is given twice ({} and {})", index, count,
                                           source(by_index[index]), source(k)));
    // Each config's census measured alike in every task: the same scaling, form and selection.
    for (std::size_t c = 0; c < s["census"].size(); ++c) {
      nlohmann::json mine = s["census"][c], theirs = given.front()["census"][c];
      for (nlohmann::json* j : {&mine, &theirs}) j->erase("instances"), j->erase("shard");
      if (mine != theirs)
        throw std::runtime_error(fmt::format(
            "{} and {} are of different runs: their census under {} differs ({} and {})", source(0),
            source(k), config_name(s["configs"][c].get<std::string>()), theirs.dump(), mine.dump()));
    }
  }
  std::vector<std::string> missing;
  std::size_t absent = count - by_index.size();
  for (std::size_t i = 0; i < count && missing.size() < 10; ++i)
    if (!by_index.count(i)) missing.push_back(fmt::format("{}/{}", i, count));
  if (absent > 0)
    throw std::runtime_error(
        fmt::format("shard{} {}{} {} missing: no file given holds {} (resubmit {})", absent == 1 ? "" : "s",
                    fmt::join(missing, ", "),
                    absent > missing.size() ? fmt::format(" and {} more", absent - missing.size()) : "",
                    absent == 1 ? "is" : "are", absent == 1 ? "it" : "them",
                    absent == 1 ? "that array task" : "those array tasks"));
  std::vector<const nlohmann::json*> shards;
  for (const auto& [index, k] : by_index) shards.push_back(&given[k]);
  return shards;
}

// Config c's census of the shards (in shard order) as one: every instance once, in the task its hash gives,
// sorted by name, as many as the run selected.
nlohmann::json merged_census(const std::vector<const nlohmann::json*>& shards, std::size_t c) {
  const std::size_t count = shards.size();
  const std::string config = (*shards.front())["configs"][c].get<std::string>();
  nlohmann::json census = (*shards.front())["census"][c];
  std::vector<nlohmann::json> instances;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    for (const auto& i : (*shards[k])["census"][c]["instances"]) {
      // An instance in a task that its hash does not give that task is of another split.
      if (census::shard_of(census::shard_key(config, i["instance"].get<std::string>()), count) != k)
        throw std::runtime_error(fmt::format(
            "shard {}/{} holds {} under {}, which belongs to shard {}", k, count,
            i["instance"].get<std::string>(), config_name(config),
            census::shard_of(census::shard_key(config, i["instance"].get<std::string>()), count)));
      instances.push_back(i);
    }
  }
  std::sort(instances.begin(), instances.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["instance"].get<std::string>() < b["instance"].get<std::string>();
  });
  for (std::size_t k = 1; k < instances.size(); ++k) {
    if (instances[k]["instance"] == instances[k - 1]["instance"])
      throw std::runtime_error(fmt::format("instance {} under config {} appears in two shards",
                                           instances[k]["instance"].get<std::string>(), config_name(config)));
  }
  // Every instance the run selected is here: a task that saw fewer (a node whose CPU lacks a Highway target
  // the others registered) would leave its pairs out without a word.
  if (census.contains("selected") && census["selected"] != instances.size())
    throw std::runtime_error(
        fmt::format("under {} the run selected {} instances but the tasks hold {}: a task saw another "
                    "selection (a node "
                    "whose CPU registers other Highway targets?)",
                    config_name(config), census["selected"].dump(), instances.size()));
  census["shard"] = "merged";
  census["instances"] = instances;
  return census;
}

// Each property test once, with its worst result over the shards.
nlohmann::json merged_properties(const std::vector<const nlohmann::json*>& shards) {
  nlohmann::json tests = nlohmann::json::object();
  for (const nlohmann::json* s : shards) {
    for (const auto& [name, verdict] : (*s)["properties"].items()) {
      if (!tests.contains(name) ||
          rank(verdict["result"].get<std::string>()) > rank(tests[name]["result"].get<std::string>()))
        tests[name] = verdict;
    }
  }
  return tests;
}

}  // namespace

nlohmann::json merge(const std::vector<nlohmann::json>& given, const std::vector<std::string>& sources) {
  const std::vector<const nlohmann::json*> shards = shards_in_order(given, sources);
  const nlohmann::json& first = *shards.front();
  nlohmann::json out = first;
  out["shard"] = "merged";
  out["merged_from"] = shards.size();
  for (std::size_t c = 0; c < first["configs"].size(); ++c) out["census"][c] = merged_census(shards, c);
  if (first.contains("properties")) out["properties"] = merged_properties(shards);
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
      merged.value("max_position", std::int64_t{0}) > 0
          ? fmt::format(", positions to {}", merged.value("max_position", std::int64_t{0}))
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
      if (rank(r) >= 2)
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
