// The formats between components, pinned: a field renamed or dropped fails here, not in a report
// downstream (Google Benchmark's output_test style). Also the registration rules every variant
// file relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "pe/api.h"
#include "pe/errors.h"
#include "pe/harness/bench_identity.h"
#include "pe/harness/contract_json.h"
#include "pe/harness/instance.h"
#include "pe/variant.h"
#include "support/source_dir.h"

namespace pe {
namespace {

harness::BenchIdentity yarn_rope() {
  return {.family = "rope",
          .instance = "rope.halfsplit.hwy@AVX2",
          .variant = "rope.hwy@AVX2",
          .op = "rope",
          .dtype = "f32",
          .length = 2048,
          .heads = 32,
          .dim = 128,
          .positions = "start",
          .scaling = "yarn"};
}

TEST(Schemas, BenchIdentityIsPinnedAndRoundTrips) {
  const nlohmann::json j = yarn_rope();
  EXPECT_EQ(
      j.dump(),
      R"({"dim":128,"dtype":"f32","family":"rope","form":"text","heads":32,)"
      R"("instance":"rope.halfsplit.hwy@AVX2","length":2048,"op":"rope","positions":"start",)"
      R"("scaling":"yarn","schema":"pe-suite/bench-identity/2","threads":1,"variant":"rope.hwy@AVX2"})");
  EXPECT_EQ(j.get<harness::BenchIdentity>(), yarn_rope());
  EXPECT_EQ(harness::identity_from_label(j.dump()), yarn_rope());
}

// Labels of version 1 (no form) are text RoPE or tables: a baseline from before still compares.
TEST(Schemas, BenchIdentityVersionOneReadsAsText) {
  nlohmann::json v1 = yarn_rope();
  v1.erase("form");
  v1["schema"] = "pe-suite/bench-identity/1";
  EXPECT_EQ(harness::identity_from_label(v1.dump()), yarn_rope());
  harness::BenchIdentity mla = yarn_rope();
  mla.form = "mla";
  EXPECT_EQ(harness::benchmark_name(mla), "rope/rope.halfsplit.hwy@AVX2/f32/T2048/H32/D128/start/mla/yarn");
}

// The name is for people; every segment the old reader dropped (the scaling) is in it.
TEST(Schemas, BenchmarkNamesOfEachShape) {
  EXPECT_EQ(harness::benchmark_name(yarn_rope()),
            "rope/rope.halfsplit.hwy@AVX2/f32/T2048/H32/D128/start/yarn");
  harness::BenchIdentity table{.family = "sinusoidal",
                               .instance = "sinusoidal.interleaved.exact",
                               .variant = "sinusoidal.exact",
                               .op = "add",
                               .dtype = "bf16",
                               .length = 8192,
                               .dim = 128,
                               .positions = "far",
                               .threads = 2};
  EXPECT_EQ(harness::benchmark_name(table),
            "sinusoidal/sinusoidal.interleaved.exact/add/bf16/L8192/d128/far/threads:2");
}

TEST(Schemas, LabelsThatAreNotIdentitiesAreContextOrErrors) {
  EXPECT_EQ(harness::identity_from_label(""), std::nullopt);
  EXPECT_EQ(harness::identity_from_label("memset"), std::nullopt);
  EXPECT_EQ(harness::identity_from_label(R"({"schema":"other/1"})"), std::nullopt);
  nlohmann::json missing = yarn_rope();
  missing.erase("scaling");
  EXPECT_THROW(harness::identity_from_label(missing.dump()), nlohmann::json::exception);
}

TEST(Schemas, ContractCarriesEveryCoefficientAndRoundTrips) {
  const Contract c{.layouts = {Layout::Interleaved, Layout::HalfSplit},
                   .outputs = {DType::F32, DType::BF16},
                   .angle_type = DType::F32,
                   .compute_type = DType::F32,
                   .max_position = std::int64_t{1} << 24,
                   .max_base = 1e7,
                   .max_input_abs = 0x1p126,
                   .table_type = DType::F16,
                   .depends_on = "",
                   .state_rows = 256,
                   .c0 = 1,
                   .ck = 3.001,
                   .ct = 1,
                   .c1 = 18.2,
                   .c1_pair = 3.01,
                   .ca = 3,
                   .c1_gain = 2.001};
  const nlohmann::json j = c;
  EXPECT_EQ(
      j.at("coefficients").dump(),
      R"({"c0":1.0,"c1":18.2,"c1_gain":2.001,"c1_pair":3.01,"c1_scale":0.0,"ca":3.0,"ck":3.001,"ct":1.0})");
  EXPECT_EQ(j.at("layouts").dump(), R"(["interleaved","halfsplit"])");
  EXPECT_EQ(j.at("table_type"), "f16");
  EXPECT_EQ(j.at("state_rows"), 256);
  const Contract back = j.get<Contract>();
  EXPECT_EQ(nlohmann::json(back), j);
  nlohmann::json older = j;  // a census file written before c1_scale: 0, as its contracts had it
  older["coefficients"].erase("c1_scale");
  older["coefficients"]["c1"] = 3.5;
  EXPECT_EQ(older.get<Contract>().c1_scale, 0.0);
  EXPECT_EQ(older.get<Contract>().c1, 3.5);
  nlohmann::json scaled = j;
  scaled["coefficients"]["c1_scale"] = 3.0;
  EXPECT_EQ(scaled.get<Contract>().c1_scale, 3.0);
  nlohmann::json bad = j;
  bad["outputs"] = {"f8"};
  EXPECT_THROW(bad.get<Contract>(), std::runtime_error);
}

// Every registered contract serialises and reads back unchanged (no field left out).
TEST(Schemas, EveryRegisteredContractRoundTrips) {
  for (const Variant* v : registry()) {
    nlohmann::json j = v->contract();
    j["depends_on"] = "";  // a pointer the variant owns: not read back
    EXPECT_EQ(nlohmann::json(j.get<Contract>()), j) << v->name();
  }
}

// Every method's JSON holds its name and exactly the fields the method reads (each set here), by the
// names its InvalidArgument uses; the HF keys are HF's (transformers' modeling_rope_utils.py).
// Every field of every method set, optionals included, each to a value distinct from its default.
RopeScaling every_field_set() {
  RopeScaling s;
  s.factor = 4;
  s.original_max_position = 4096;
  s.seq_len = 9000;
  s.mscale = 1;
  s.mscale_all_dim = 0.5;
  s.attention_factor = 1.2;
  s.position_scale = 2;
  s.longrope_switch = LongRopeSwitch::PerToken;
  s.dynamic_semantics = DynamicSemantics::Static;
  s.yarn_attention = YarnAttention::Multiply;
  s.alpha = 3;
  s.partial_rotary_factor = 0.5;
  s.short_factor = {1, 1.5};
  s.long_factor = {2, 3};
  return s;
}

TEST(Schemas, ScalingJsonCarriesExactlyTheFieldsItsMethodReads) {
  RopeScaling s = every_field_set();
  for (const ScalingMethod& m : scaling_methods()) {
    s.type = m.type;
    const nlohmann::json j = s;
    std::set<std::string> keys, want = {"type"};
    for (const auto& [k, v] : j.items()) keys.insert(k);
    for (std::string_view f : m.reads) want.insert(std::string(f));
    EXPECT_EQ(keys, want) << m.name;
    EXPECT_EQ(j["type"], std::string(m.name));
    for (std::string_view f : m.required) EXPECT_TRUE(reads_field(m.type, f)) << m.name << " requires " << f;
  }
  s.type = RopeScalingType::Yarn;
  s.mscale.reset();
  s.mscale_all_dim.reset();
  s.attention_factor.reset();
  const nlohmann::json yarn = s;
  EXPECT_FALSE(yarn.contains("mscale") || yarn.contains("attention_factor")) << yarn.dump();
  EXPECT_EQ(yarn["beta_fast"], 32.0);
  EXPECT_EQ(yarn["truncate"], true);
  std::map<std::string, std::string> hf;
  for (const ScalingField& f : scaling_fields()) hf[std::string(f.name)] = f.hf_key;
  EXPECT_EQ(hf["original_max_position"], "original_max_position_embeddings");
  EXPECT_EQ(hf["low_freq_factor"], "low_freq_factor");
  EXPECT_EQ(hf["seq_len"], "");
  EXPECT_EQ(scaling_method(RopeScalingType::Llama3).name, "llama3");
}

TEST(Schemas, ScalingJsonRoundTripsAndRejectsWhatItsMethodDoesNotRead) {
  RopeScaling s = every_field_set();
  for (const ScalingMethod& m : scaling_methods()) {
    s.type = m.type;
    const nlohmann::json j = s;
    const RopeScaling back = j.get<RopeScaling>();
    EXPECT_EQ(nlohmann::json(back), j) << m.name;
  }
  const auto error = [](const nlohmann::json& j) {
    try {
      (void)j.get<RopeScaling>();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error({{"type", "linear"}, {"factor", 2}, {"beta_fast", 8}}),
            "rope_scaling: linear does not read 'beta_fast'");
  EXPECT_EQ(error({{"type", "yarn"}, {"factor", 2}}), "rope_scaling: yarn requires 'original_max_position'");
  EXPECT_EQ(error({{"type", "su"}}), "rope_scaling: unknown type 'su'");
  EXPECT_EQ(error({{"type", "longrope"},
                   {"factor", 2},
                   {"original_max_position", 8},
                   {"short_factor", {1.0}},
                   {"long_factor", {2.0}},
                   {"longrope_switch", "per-batch"}}),
            "rope_scaling: longrope_switch must be per-sequence or per-token, got \"per-batch\"");
}

// docs/contracts.md §3 lists every variant's declared numbers: it must say what the registry declares.
TEST(Schemas, ContractsDocumentMatchesTheRegistry) {
  std::ifstream doc(pe::testing::source_dir() + "/docs/contracts.md");
  ASSERT_TRUE(doc) << "docs/contracts.md";
  std::map<std::string, std::vector<std::string>> rows;
  for (std::string line; std::getline(doc, line);) {
    const auto fams = families();
    if (std::none_of(fams.begin(), fams.end(), [&](const FamilyInfo& f) {
          return line.rfind("| " + std::string(f.name) + ".", 0) == 0;
        }))
      continue;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        cell += '|';
        ++i;
      } else if (line[i] == '|') {
        cells.push_back(cell.substr(cell.find_first_not_of(' '),
                                    cell.find_last_not_of(' ') - cell.find_first_not_of(' ') + 1));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    rows[cells[0]] = cells;
  }
  const auto number = [](const std::string& text) {
    if (text == "–" || text == "-") return 0.0;
    if (text.rfind("2^", 0) == 0) return std::ldexp(1.0, std::stoi(text.substr(2)));
    return std::stod(text);  // "1 (bf16)" reads 1
  };
  int listed = 0;
  for (const Variant* v : registry()) {
    if (v->name().find('@') != std::string::npos || v->name().find("mutant") != std::string::npos) continue;
    ++listed;
    ASSERT_TRUE(rows.count(v->name())) << v->name() << " has no row in docs/contracts.md §3";
    const std::vector<std::string>& r = rows[v->name()];
    ASSERT_EQ(r.size(), 12u) << v->name();
    const Contract& c = v->contract();
    EXPECT_EQ(r[1], to_string(c.angle_type)) << v->name();
    EXPECT_EQ(r[2], to_string(c.compute_type)) << v->name();
    EXPECT_EQ(number(r[3]), c.c0) << v->name();
    EXPECT_EQ(number(r[4]), c.ck) << v->name();
    EXPECT_EQ(number(r[5]), c.ct) << v->name();
    EXPECT_EQ(number(r[6]), c.c1) << v->name();
    EXPECT_EQ(number(r[7]), c.c1_pair) << v->name();
    // One column: RoPE's c1_gain, a table's c1_scale (neither family has the other).
    EXPECT_EQ(number(r[8]), v->family() == Family::Sinusoidal ? c.c1_scale : c.c1_gain) << v->name();
    EXPECT_EQ(number(r[9]), static_cast<double>(c.max_position)) << v->name();
    EXPECT_EQ(number(r[10]), c.max_base) << v->name();
    EXPECT_EQ(r[11], c.depends_on) << v->name();
  }
  EXPECT_EQ(static_cast<std::size_t>(listed), rows.size())
      << "docs/contracts.md lists a variant the registry lacks";
}

TEST(Registry, NamesAreFamilyDotBackendWithAnOptionalTarget) {
  EXPECT_TRUE(valid_variant_name("rope.exact", Family::Rope));
  EXPECT_TRUE(valid_variant_name("rope.exact@AVX3_ZEN4", Family::Rope));
  EXPECT_TRUE(valid_variant_name("sinusoidal.scalar_f32", Family::Sinusoidal));
  EXPECT_FALSE(valid_variant_name("rope.exact", Family::Sinusoidal));
  EXPECT_FALSE(valid_variant_name("rope.", Family::Rope));
  EXPECT_FALSE(valid_variant_name("rope.Exact", Family::Rope));
  EXPECT_FALSE(valid_variant_name("rope.exact@", Family::Rope));
  EXPECT_FALSE(valid_variant_name("rope.exact@avx2", Family::Rope));
  EXPECT_FALSE(valid_variant_name("ropes.exact", Family::Rope));
  for (const Variant* v : registry()) EXPECT_TRUE(valid_variant_name(v->name(), v->family())) << v->name();
}

// Every Highway variant is registered as its dispatcher and once per target this CPU supports, and
// every one of them has instances the property suites run on.
TEST(Registry, HighwayVariantsHaveEveryTargetTheirDispatcherHas) {
  for (const char* base : {"sinusoidal.hwy", "sinusoidal.exact", "rope.hwy", "rope.exact"}) {
    ASSERT_NE(find_variant(base), nullptr) << base;
    std::size_t targets = 0;
    for (const Variant* v : registry()) {
      if (v->name().starts_with(std::string(base) + "@")) {
        ++targets;
        EXPECT_FALSE(harness::instances_matching(v->name()).empty()) << v->name();
      }
    }
    EXPECT_GE(targets, 2u) << base << ": the baseline and at least one SIMD target";
  }
}

// The typed-span overloads are the Buffer calls with the type taken from the span: same bits, same
// validation (a wrong size names the buffer and leaves it untouched).
TEST(Api, TypedSpansAreTheBufferCalls) {
  const Variant& v = *find_variant("sinusoidal.scalar_f64");
  const SinusoidalPlan plan({.dim = 8});
  const std::vector<std::int64_t> positions = {0, 7, 1000};
  std::vector<float> typed(24), untyped(24);
  sinusoidal_table(v, plan, positions, std::span<float>(typed));
  sinusoidal_table(v, plan, positions, buffer(std::span<float>(untyped)));
  EXPECT_EQ(typed, untyped);
  std::vector<BFloat16> short_out(23, BFloat16{0x1234});
  try {
    sinusoidal_table(v, plan, positions, std::span<BFloat16>(short_out));
    ADD_FAILURE() << "a 23-element output for 3 x 8 was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "out");
  }
  for (const BFloat16& b : short_out) EXPECT_EQ(b.bits, 0x1234);

  const Variant& r = *find_variant("rope.scalar_f64");
  const RopePlan rplan({.head_dim = 4});
  std::vector<double> x = {1, 0, 0, 1, 0.5, 0.25, -1, 2}, y = x;
  rope_apply(r, rplan, std::vector<std::int64_t>{3, 9}, 1, std::span<double>(x));
  rope_apply(r, rplan, std::vector<std::int64_t>{3, 9}, 1, buffer(std::span<double>(y)));
  EXPECT_EQ(x, y);
}

}  // namespace
}  // namespace pe
