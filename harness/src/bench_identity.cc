#include "pe/harness/bench_identity.h"

#include <stdexcept>

namespace pe::harness {

void to_json(nlohmann::json& j, const BenchIdentity& id) {
  j = {{"schema", kBenchIdentitySchema},
       {"family", id.family},
       {"instance", id.instance},
       {"variant", id.variant},
       {"op", id.op},
       {"dtype", id.dtype},
       {"length", id.length},
       {"heads", id.heads},
       {"dim", id.dim},
       {"positions", id.positions},
       {"scaling", id.scaling},
       {"threads", id.threads}};
}

void from_json(const nlohmann::json& j, BenchIdentity& id) {
  const std::string schema = j.at("schema").get<std::string>();
  if (schema != kBenchIdentitySchema)
    throw std::runtime_error("benchmark identity schema " + schema + ", expected " + kBenchIdentitySchema);
  j.at("family").get_to(id.family);
  j.at("instance").get_to(id.instance);
  j.at("variant").get_to(id.variant);
  j.at("op").get_to(id.op);
  j.at("dtype").get_to(id.dtype);
  j.at("length").get_to(id.length);
  j.at("heads").get_to(id.heads);
  j.at("dim").get_to(id.dim);
  j.at("positions").get_to(id.positions);
  j.at("scaling").get_to(id.scaling);
  j.at("threads").get_to(id.threads);
}

// Appended piece by piece: GCC 12's -Wrestrict misfires on `"literal" + std::string` (GCC bug 105329).
std::string benchmark_name(const BenchIdentity& id) {
  std::string name = id.family;
  for (const std::string* part : {&id.instance, id.op == "rope" ? nullptr : &id.op, &id.dtype}) {
    if (part == nullptr) continue;
    name += '/';
    name += *part;
  }
  const bool rope = id.op == "rope";
  name += rope ? "/T" : "/L";
  name += std::to_string(id.length);
  if (rope) {
    name += "/H";
    name += std::to_string(id.heads);
  }
  name += rope ? "/D" : "/d";
  name += std::to_string(id.dim);
  name += '/';
  name += id.positions;
  if (id.scaling != "none") {
    name += '/';
    name += id.scaling;
  }
  if (id.threads != 1) {
    name += "/threads:";
    name += std::to_string(id.threads);
  }
  return name;
}

std::optional<BenchIdentity> identity_from_label(const std::string& label) {
  if (label.empty() || label.front() != '{') return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(label, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("schema", "") != kBenchIdentitySchema) return std::nullopt;
  return j.get<BenchIdentity>();
}

}  // namespace pe::harness
