#include "pe/harness/bench_identity.h"

#include <string>

namespace pe::harness {

// Appended piece by piece: GCC 12's -Wrestrict misfires on `"literal" + std::string` (GCC bug 105329).
std::string benchmark_name(const BenchIdentity& id) {
  const bool rope = id.op == "rope";
  std::string name = id.family;
  name += '/';
  name += id.instance;
  if (!rope) {
    name += '/';
    name += id.op;
  }
  name += '/';
  name += id.dtype;
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
  if (id.form != "text") {
    name += '/';
    name += id.form;
  }
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
  nlohmann::json j = nlohmann::json::parse(label, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  if (j.value("schema", "") == kBenchIdentitySchemaV1 && !j.contains("form")) {
    j["form"] = "text";
    j["schema"] = kBenchIdentitySchema;
  }
  if (j.value("schema", "") != kBenchIdentitySchema) return std::nullopt;
  return j.get<BenchIdentity>();
}

}  // namespace pe::harness
