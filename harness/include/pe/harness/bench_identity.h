// What a kernel benchmark measured, as structured fields: the join key between pe_bench's Google
// Benchmark JSON, `compare` and the report. pe_bench writes it as the benchmark's label (one JSON
// object); readers take the fields from there and never re-parse the benchmark name, which is only
// for people (`<family>/<instance>/<op>/<dtype>/<shape>/<positions>[/<scaling>]`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace pe::harness {

inline constexpr const char* kBenchIdentitySchema = "pe-suite/bench-identity/2";
// Version 1 had no `form`: its labels read as text RoPE (and tables), so older baselines still compare.
inline constexpr const char* kBenchIdentitySchemaV1 = "pe-suite/bench-identity/1";

struct BenchIdentity {
  std::string schema = kBenchIdentitySchema;
  std::string family;            // "sinusoidal", "rope"
  std::string instance;          // "rope.halfsplit.hwy@AVX2"
  std::string variant;           // "rope.hwy@AVX2"
  std::string op;                // "table", "add" (sinusoidal), "rope"
  std::string dtype;             // "f32", "f64", "bf16", "f16"
  std::int64_t length = 0;       // rows of the table, or RoPE tokens
  std::int64_t heads = 0;        // RoPE heads (0 for tables)
  std::int64_t dim = 0;          // table dim, or RoPE head_dim
  std::string positions;         // "start" (from 0) or "far" (from 2^20)
  std::string scaling = "none";  // RoPE scaling method (pe/rope_scaling.h), "none" unscaled
  int threads = 1;
  std::string form = "text";  // RoPE's rotary form: "text", "mrope" (Qwen2.5-VL), "mla" (DeepSeek), "axial"
                              // (Flux); tables "text"

  bool operator==(const BenchIdentity&) const = default;
};

// {"schema": kBenchIdentitySchema, "family": ..., ...}: every field, always; reading throws
// nlohmann::json::exception (out_of_range, type_error) on a missing or mistyped field.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BenchIdentity, schema, family, instance, variant, op, dtype, length, heads,
                                   dim, positions, scaling, threads, form)

// The human-readable benchmark name: "rope/rope.halfsplit.hwy/f32/T2048/H32/D128/start/yarn" (a form
// other than text follows the positions: ".../D128/start/mrope").
std::string benchmark_name(const BenchIdentity& id);
// The identity a benchmark label holds (version 1 read as form "text", schema updated); nullopt for a
// label that is not one (limits/, plan/, another schema). Throws as reading does for a label of this schema
// with a missing or mistyped field.
std::optional<BenchIdentity> identity_from_label(const std::string& label);

}  // namespace pe::harness
