// The config.json resolver against the shipped configs (examples/hf_configs) and small inline ones.
// Expected values are computed here from each config's own numbers with transformers' rules
// (modeling_rope_utils.py and the model configuration files), never read back from the resolver.
#include "pe/check/hf_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "support/source_dir.h"

namespace pe::check {
namespace {

using nlohmann::json;

// A front end that calls each parameter by a flag ("layer_type" -> "--layer-type").
const Names& flags() {
  static const Names n([](std::string_view canonical) {
    std::string flag = "--" + std::string(canonical);
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
  });
  return n;
}

json shipped(const std::string& name) {
  return read_hf_config(pe::testing::source_dir() + "/examples/hf_configs/" + name + ".json", flags());
}

HfResolution resolve(const json& c, const std::string& file, std::optional<std::int64_t> layer,
                     const std::string& layer_type) {
  return resolve_hf_config(c, file, "--hf-config " + file, layer, layer_type, flags());
}

HfRopeSetting only(const json& c) { return resolve(c, "test.json", std::nullopt, "").setting; }

// The message of the BadRequest `f` throws ("" when none).
template <class F>
std::string usage_error(F f) {
  try {
    f();
  } catch (const BadRequest& e) {
    return e.what();
  }
  return "";
}

TEST(HfConfig, Llama31) {
  const json c = shipped("Llama-3.1-8B");
  const HfRopeSetting s = only(c);
  EXPECT_EQ(s.spec.base, c["rope_theta"].get<double>());
  EXPECT_EQ(s.head_dim(), c["hidden_size"].get<int>() / c["num_attention_heads"].get<int>());  // 128
  EXPECT_EQ(s.spec.rotary_dim, s.head_dim());
  EXPECT_EQ(s.spec.scaling.method, RopeScalingType::Llama3);
  EXPECT_EQ(*s.spec.scaling.factor, 8.0);
  EXPECT_EQ(*s.spec.scaling.low_freq_factor, 1.0);
  EXPECT_EQ(*s.spec.scaling.high_freq_factor, 4.0);
  EXPECT_EQ(*s.spec.scaling.original_max_position, 8192);
  EXPECT_EQ(s.spec.layout, std::nullopt);  // modeling_llama.py: rotate_half
}

TEST(HfConfig, Llama32HeadDimKey) {
  const HfRopeSetting s = only(shipped("Llama-3.2-1B"));
  EXPECT_EQ(s.head_dim(), 64);  // its head_dim key, equal to 2048/32 here
  EXPECT_EQ(*s.spec.scaling.factor, 32.0);
}

TEST(HfConfig, Phi2PartialRotary) {
  const json c = shipped("phi-2");
  const HfRopeSetting s = only(c);
  EXPECT_EQ(s.head_dim(), 80);                              // 2560 / 32
  EXPECT_EQ(s.spec.rotary_dim, 32);                         // int(80 * 0.4)
  EXPECT_EQ(s.spec.scaling.method, RopeScalingType::None);  // rope_scaling null
}

TEST(HfConfig, Phi3LongRopeDerivesTheFactorFromTheTwoLengths) {
  const json c = shipped("Phi-3-mini-128k-instruct");
  const HfRopeSetting s = only(c);
  EXPECT_EQ(s.spec.scaling.method, RopeScalingType::LongRope);
  // No factor key: max_position_embeddings / original_max_position_embeddings = 131072 / 4096.
  EXPECT_EQ(*s.spec.scaling.factor, 32.0);
  EXPECT_EQ(*s.spec.scaling.original_max_position, 4096);  // the top-level key (standardize_rope_params)
  ASSERT_EQ(s.spec.scaling.short_factor->size(), 48u);     // head_dim 96 / 2
  EXPECT_EQ(s.spec.scaling.long_factor->front(), c["rope_scaling"]["long_factor"][0].get<double>());
  // The old name is renamed and said.
  json su = c;
  su["rope_scaling"]["type"] = "su";
  const HfRopeSetting old = only(su);
  EXPECT_EQ(old.spec.scaling.method, RopeScalingType::LongRope);
  EXPECT_NE(json(old.notes).dump().find("Phi-3's old name for longrope"), std::string::npos);
}

TEST(HfConfig, QwenYarnKeepsTheExplicitFactor) {
  const HfRopeSetting s = only(shipped("Qwen2.5-7B-Instruct-yarn"));
  EXPECT_EQ(s.spec.scaling.method, RopeScalingType::Yarn);
  EXPECT_EQ(s.head_dim(), 3584 / 28);
  EXPECT_EQ(*s.spec.scaling.factor, 4.0);  // explicit; max_position_embeddings/original would say 1
  EXPECT_EQ(*s.spec.scaling.original_max_position, 32768);
  EXPECT_FALSE(s.spec.scaling.mscale.has_value());
}

TEST(HfConfig, QwenVlMropeIsDefaultRopeWithSections) {
  const HfRopeSetting s = only(shipped("Qwen2.5-VL-7B-Instruct"));
  EXPECT_EQ(s.spec.scaling.method, RopeScalingType::None);
  EXPECT_EQ(s.spec.form.mrope_section, (std::vector<std::int64_t>{16, 24, 24}));  // 16+24+24 = 128/2 pairs
  EXPECT_EQ(s.spec.base, 1e6);
}

TEST(HfConfig, DeepSeekMlaRopeHead) {
  const HfRopeSetting s = only(shipped("DeepSeek-V2-Lite"));
  EXPECT_TRUE(s.mla);
  EXPECT_EQ(s.head_dim(), 64);  // qk_rope_head_dim
  EXPECT_EQ(*s.spec.scaling.factor, 40.0);
  EXPECT_EQ(*s.spec.scaling.mscale, 0.707);
  EXPECT_EQ(*s.spec.scaling.mscale_all_dim, 0.707);
  EXPECT_EQ(s.spec.layout, Layout::Interleaved);  // modeling_deepseek_v2.py: view_as_complex
}

TEST(HfConfig, Gemma3SlidingLayersUseTheLocalBaseAndNoScaling) {
  const json c = shipped("Gemma-3-4B");
  const std::vector<HfRopeSetting> all = hf_rope_settings(c, "g.json");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "sliding_attention");
  EXPECT_EQ(all[0].spec.base, 10000.0);  // Gemma3TextConfig's rope_local_base_freq
  EXPECT_EQ(all[0].spec.scaling.method, RopeScalingType::None);
  EXPECT_EQ(all[1].name, "full_attention");
  EXPECT_EQ(all[1].spec.base, 1e6);
  EXPECT_EQ(all[1].spec.scaling.method, RopeScalingType::Linear);
  EXPECT_EQ(*all[1].spec.scaling.factor, 8.0);
  EXPECT_EQ(all[1].head_dim(), 256);
  // Layer i is full iff (i + 1) % 6 == 0: 34 layers give 5 full ones.
  EXPECT_EQ(all[1].layers, (std::vector<std::int64_t>{5, 11, 17, 23, 29}));
  EXPECT_EQ(all[0].layers.size(), 29u);
  EXPECT_EQ(resolve(c, "g.json", 5, "").setting.name, "full_attention");
  EXPECT_EQ(resolve(c, "g.json", 4, "").setting.name, "sliding_attention");
  const std::string none = usage_error([&] { resolve(c, "g.json", std::nullopt, ""); });
  EXPECT_EQ(none.rfind("--layer", 0), 0u) << none;
  EXPECT_NE(none.find("sliding_attention"), std::string::npos);
  EXPECT_NE(none.find("full_attention"), std::string::npos);
  const std::string far = usage_error([&] { resolve(c, "g.json", 34, ""); });
  EXPECT_EQ(far.rfind("--layer 34", 0), 0u) << far;
  const std::string type = usage_error([&] { resolve(c, "g.json", std::nullopt, "global"); });
  EXPECT_EQ(type.rfind("--layer-type global", 0), 0u) << type;
  EXPECT_NE(type.find("full_attention"), std::string::npos);
}

TEST(HfConfig, Llama4NopeEveryFourthLayerWithTheTemperature) {
  const json c = shipped("Llama-4-Scout-17B-16E");
  const std::vector<HfRopeSetting> all = hf_rope_settings(c, "l4.json");
  ASSERT_EQ(all.size(), 2u);
  const HfRopeSetting nope = resolve(c, "l4.json", 3, "").setting;  // (3 + 1) % 4 == 0
  EXPECT_FALSE(nope.rope());
  EXPECT_EQ(nope.spec.temperature.type, AttnTemperatureType::Llama4);
  EXPECT_EQ(nope.spec.temperature.attn_scale, 0.1);
  EXPECT_EQ(nope.spec.temperature.floor_scale, 8192);
  const HfRopeSetting rope = resolve(c, "l4.json", 2, "").setting;
  EXPECT_TRUE(rope.rope());
  EXPECT_EQ(rope.spec.temperature.type, std::nullopt);  // HF applies it only where use_rope is false
  EXPECT_EQ(rope.spec.layout, Layout::Interleaved);
  EXPECT_EQ(rope.spec.scaling.method, RopeScalingType::Llama3);
}

TEST(HfConfig, SmolLM3NoRopeList) {
  const json c = shipped("SmolLM3-3B");
  EXPECT_FALSE(resolve(c, "s.json", 35, "").setting.rope());
  EXPECT_TRUE(resolve(c, "s.json", 34, "").setting.rope());
  EXPECT_EQ(resolve(c, "s.json", std::nullopt, "full_attention").setting.spec.base, 5e6);
  EXPECT_FALSE(resolve(c, "s.json", std::nullopt, "nope").setting.spec.temperature.type.has_value());
}

TEST(HfConfig, LegacyRopeScalingWinsOverRopeParametersAndTheirThetaOverTheTopLevel) {
  json c = {{"hidden_size", 64},
            {"num_attention_heads", 2},
            {"rope_theta", 10000.0},
            {"rope_parameters", {{"rope_type", "linear"}, {"factor", 2.0}, {"rope_theta", 5e5}}}};
  HfRopeSetting s = only(c);
  EXPECT_EQ(s.spec.base, 5e5);  // the dict's own rope_theta (setdefault)
  EXPECT_EQ(*s.spec.scaling.factor, 2.0);
  c["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
  const HfResolution r = resolve(c, "t.json", std::nullopt, "");
  EXPECT_EQ(*r.setting.spec.scaling.factor,
            4.0);  // convert_rope_params_to_dict: rope_scaling or rope_parameters
  EXPECT_EQ(r.setting.spec.base, 10000.0);
  EXPECT_NE(json(r.not_read).dump().find("rope_parameters"), std::string::npos);
}

TEST(HfConfig, V5ParametersKeyedByLayerType) {
  const json c = {{"head_dim", 32},
                  {"num_hidden_layers", 2},
                  {"layer_types", {"sliding_attention", "full_attention"}},
                  {"rope_parameters",
                   {{"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
                    {"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1e6}}}}}};
  const std::vector<HfRopeSetting> all = hf_rope_settings(c, "v5.json");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].spec.base, 10000.0);
  EXPECT_EQ(all[0].spec.scaling.method, RopeScalingType::None);
  EXPECT_EQ(all[1].spec.base, 1e6);
  EXPECT_EQ(*all[1].spec.scaling.factor, 8.0);
}

TEST(HfConfig, UnknownKeysAreListed) {
  const json c = {
      {"head_dim", 64},
      {"rope_theta", 1e4},
      {"rotary_emb_fraction", 0.5},
      {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}, {"beta_fast", 8}, {"wobble", 1}}}};
  const HfResolution r = resolve(c, "u.json", std::nullopt, "");
  const std::string unread = json(r.not_read).dump();
  EXPECT_NE(unread.find("rope_scaling.wobble"), std::string::npos) << unread;
  EXPECT_NE(unread.find("rope_scaling.beta_fast"), std::string::npos) << unread;  // linear does not read it
  EXPECT_NE(unread.find("rotary_emb_fraction"), std::string::npos) << unread;
}

TEST(HfConfig, ErrorsNameTheKey) {
  const json bad_type = {{"head_dim", 64}, {"rope_scaling", {{"rope_type", "xpos"}, {"factor", 2.0}}}};
  const std::string t = usage_error([&] { only(bad_type); });
  EXPECT_EQ(t.rfind("rope_scaling.rope_type xpos", 0), 0u) << t;
  const std::string h = usage_error([&] { only(json{{"rope_theta", 1e4}}); });
  EXPECT_EQ(h.rfind("head_dim", 0), 0u) << h;
  const std::string f = usage_error([&] {
    only(json{{"head_dim", 64}, {"rope_scaling", {{"type", "linear"}}}});
  });
  EXPECT_EQ(f.rfind("rope_scaling.factor", 0), 0u) << f;
  const std::string p = usage_error([&] { only(json{{"head_dim", 80}, {"partial_rotary_factor", 1.5}}); });
  EXPECT_EQ(p.rfind("partial_rotary_factor", 0), 0u) << p;
}

TEST(HfConfig, DynamicReadsMaxPositionEmbeddings) {
  const json c = {
      {"head_dim", 64},
      {"max_position_embeddings", 4096},
      {"rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}, {"original_max_position_embeddings", 2048}}}};
  const HfResolution r = resolve(c, "d.json", std::nullopt, "");
  EXPECT_EQ(*r.setting.spec.scaling.original_max_position, 4096);  // _compute_dynamic_ntk_parameters
  EXPECT_NE(json(r.not_read).dump().find("original_max_position_embeddings"), std::string::npos);
}

}  // namespace
}  // namespace pe::check
