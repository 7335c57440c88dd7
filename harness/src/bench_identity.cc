#include "pe/harness/bench_identity.h"

#include <fmt/format.h>

#include <string>

namespace pe::harness {

std::string benchmark_name(const BenchIdentity& id) {
  std::string name = id.op == "rope" ? fmt::format("{}/{}/{}/T{}/H{}/D{}/{}", id.family, id.instance,
                                                   id.dtype, id.length, id.heads, id.dim, id.positions)
                                     : fmt::format("{}/{}/{}/{}/L{}/d{}/{}", id.family, id.instance, id.op,
                                                   id.dtype, id.length, id.dim, id.positions);
  if (id.form != "text") name += fmt::format("/{}", id.form);
  if (id.scaling != "none") name += fmt::format("/{}", id.scaling);
  if (id.threads != 1) name += fmt::format("/threads:{}", id.threads);
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
