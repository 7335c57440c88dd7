// One rotary layer of a config.json read key by key with transformers' rules (hf_config_detail.h).
//
// Sources (huggingface/transformers, src/transformers/):
//   modeling_rope_utils.py: standardize_rope_params (rope_type from "type", rope_theta and
//   partial_rotary_factor
//     into the parameters, original_max_position_embeddings: the top-level key first, then the parameters',
//     then max_position_embeddings), the _compute_*_parameters functions (what each type reads and derives),
//     dynamic_rope_update (seq_len = max(position_ids) + 1);
//   configuration_utils.py (v5 RotaryEmbeddingConfigMixin.convert_rope_params_to_dict): a legacy rope_scaling
//     wins over rope_parameters, and rope_parameters' own rope_theta over the top-level one;
//   models/gemma3/configuration_gemma3.py and modeling_gemma3.py, models/llama4/configuration_llama4.py and
//   modeling_llama4.py, models/smollm3/configuration_smollm3.py,
//   models/qwen2_5_vl/configuration_qwen2_5_vl.py, models/deepseek_v2/modeling_deepseek_v2.py,
//   models/deepseek_v3/modeling_deepseek_v3.py, models/phi3.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "model_config/hf_config_detail.h"
#include "pe/errors.h"
#include "pe/rope_scaling.h"

namespace pe::check::detail {
namespace {

// The class defaults that published configs leave out (google/gemma-3-4b-it's text_config has no rope_theta,
// head_dim or sliding_window_pattern; Llama-4's has no no_rope_layer_interval): the __init__ defaults of
// Gemma3TextConfig (configuration_gemma3.py), Llama4TextConfig (configuration_llama4.py) and SmolLM3Config
// (configuration_smollm3.py), RoPE keys only.
struct ClassDefaults {
  const char* model_type;
  const char* class_name;
  const char* values;
};
constexpr ClassDefaults kDefaults[] = {
    {"gemma3_text", "Gemma3TextConfig",
     R"({"head_dim": 256, "num_attention_heads": 8, "num_hidden_layers": 26, "rope_theta": 1000000.0,
         "rope_local_base_freq": 10000.0, "sliding_window_pattern": 6, "max_position_embeddings": 131072})"},
    {"llama4_text", "Llama4TextConfig",
     R"({"no_rope_layer_interval": 4, "attn_temperature_tuning": true, "floor_scale": 8192, "attn_scale": 0.1,
         "head_dim": 128, "rope_theta": 500000})"},
    {"smollm3", "SmolLM3Config", R"({"no_rope_layer_interval": 4, "rope_theta": 2000000.0})"},
};

}  // namespace

Text text_of(const json& config, const std::string& source) {
  Text t{&config, "", source, config.value("model_type", std::string()), json::object(), ""};
  if (present(config, "text_config") && config["text_config"].is_object()) {
    t.j = &config["text_config"];
    t.prefix = "text_config.";
    t.model_type = t.j->value("model_type", t.model_type + "_text");
  }
  for (const ClassDefaults& d : kDefaults) {
    if (t.model_type == d.model_type) {
      t.defaults = json::parse(d.values);
      t.defaults_name = d.class_name;
    }
  }
  return t;
}

Head head_of(const Text& t) {
  Head h;
  if (const json* v = t.get("qk_rope_head_dim")) {
    // DeepSeek MLA: q = [q_nope | q_pe]; only q_pe (qk_rope_head_dim) rotates, as its own head
    // (DeepseekV2Config sets head_dim = qk_rope_head_dim for the rotary embedding).
    h.head_dim = t.integer("qk_rope_head_dim");
    h.mla = true;
    if (t.get("qk_nope_head_dim") != nullptr) h.mla_nope_head_dim = t.integer("qk_nope_head_dim");
    h.sources.push_back({"head_dim", *v, t.key("qk_rope_head_dim") + " (MLA: the rope part of q/k)"});
  } else if (t.get("head_dim") != nullptr) {
    h.head_dim = t.integer("head_dim");
    h.sources.push_back({"head_dim", h.head_dim, t.key("head_dim")});
  } else {
    const std::int64_t hidden = t.integer("hidden_size"), heads = t.integer("num_attention_heads");
    if (hidden == 0 || heads == 0)
      t.fail(t.prefix + "head_dim", "absent, and hidden_size/num_attention_heads cannot derive it");
    h.head_dim = hidden / heads;  // HF: config.hidden_size // config.num_attention_heads
    h.sources.push_back({"head_dim", h.head_dim, t.prefix + "hidden_size/num_attention_heads"});
  }
  if (h.head_dim < 2) t.fail(h.sources.back().key, fmt::format("head dim {} is < 2", h.head_dim));
  // Pair layouts other than rotate_half's, from each model's modeling code.
  if (t.model_type == "llama4_text" || t.model_type == "deepseek_v2") {
    h.layout = Layout::Interleaved;
    h.sources.push_back({"layout", "interleaved", "model_type " + t.model_type});
    h.notes.push_back(
        fmt::format("layout interleaved, from model_type {} (its modeling code rotates "
                    "view_as_complex pairs (2j, 2j+1)); --layout overrides",
                    t.model_type));
  } else if (t.model_type == "deepseek_v3") {
    const json* v = t.get("rope_interleave");
    if (v == nullptr || (v->is_boolean() && v->get<bool>())) {
      h.layout = Layout::Deinterleave;
      h.sources.push_back({"layout", "deinterleave", "model_type deepseek_v3, rope_interleave"});
      h.notes.push_back(
          "layout deinterleave, from model_type deepseek_v3 with rope_interleave (default true): "
          "apply_rotary_pos_emb_interleave; --layout overrides");
    }
  }
  return h;
}

std::vector<std::int64_t> integers(const json& list, const Text& t, const std::string& k) {
  if (!list.is_array()) t.fail(k, fmt::format("expected a list, got {}", list.dump()));
  std::vector<std::int64_t> out;
  for (const json& v : list) {
    if (!v.is_number_integer()) t.fail(k, fmt::format("expected integers, got {}", list.dump()));
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

namespace {

// One rotary layer's parameter dict `p` (null: none) read key by key into `s`, with the keys it read.
struct Reading {
  const Text& t;
  const json* p;
  const std::string& pk;
  bool flat;
  HfRopeSetting& s;
  std::set<std::string> read;
  std::int64_t max_pos = 0;  // max_position_embeddings, read with the method's keys

  const json* in_p(const std::string& k) {
    if (p == nullptr || !present(*p, k)) return nullptr;
    read.insert(k);
    return &(*p)[k];
  }
  std::optional<double> num(const std::string& k) {
    const json* v = in_p(k);
    if (v == nullptr) return std::nullopt;
    s.sources.push_back({k, *v, pk + "." + k});
    return t.number(*v, pk + "." + k);
  }
  std::optional<double> required(const std::string& k, const std::string& type) {
    auto v = num(k);
    if (!v) t.fail(pk + "." + k, "required by rope_type " + type);
    return v;
  }
  // L for llama3, yarn, longrope (standardize_rope_params): the top-level key first in a flat config.
  std::int64_t original_l() {
    const json* top = flat ? t.get("original_max_position_embeddings") : nullptr;
    const json* own = in_p("original_max_position_embeddings");
    const json* v = top != nullptr ? top : own;
    std::string k =
        top != nullptr ? t.key("original_max_position_embeddings") : pk + ".original_max_position_embeddings";
    if (top != nullptr && own != nullptr && *own != *top)
      s.notes.push_back(
          fmt::format("{} {} not read: the top-level original_max_position_embeddings wins "
                      "(standardize_rope_params)",
                      pk + ".original_max_position_embeddings", own->dump()));
    if (v == nullptr) {
      if (max_pos == 0)
        t.fail(pk + ".original_max_position_embeddings", "absent, and no max_position_embeddings");
      s.sources.push_back({"original_max_position", max_pos, t.key("max_position_embeddings")});
      return max_pos;
    }
    if (!v->is_number_integer()) t.fail(k, "expected an integer, got " + v->dump());
    s.sources.push_back({"original_max_position", *v, k});
    return v->get<std::int64_t>();
  }
  // factor: given, or (yarn, longrope) max_position_embeddings / original_max_position_embeddings.
  std::optional<double> factor_or_ratio(std::int64_t l) {
    if (auto f = num("factor")) return f;
    if (max_pos == 0) t.fail(pk + ".factor", "absent, and no max_position_embeddings to derive it from");
    const double f = static_cast<double>(max_pos) / static_cast<double>(l);
    s.sources.push_back({"factor", f, "max_position_embeddings/original_max_position_embeddings"});
    return f;
  }
};

// Base: rope_parameters' own rope_theta first (setdefault), then the top-level key, then HF's 10000.
void read_base(Reading& r) {
  if (const json* v = r.in_p("rope_theta")) {
    r.s.spec.base = r.t.number(*v, r.pk + ".rope_theta");
    r.s.sources.push_back({"base", *v, r.pk + ".rope_theta"});
  } else if (const json* top = r.t.get("rope_theta")) {
    r.s.spec.base = r.t.number(*top, r.t.key("rope_theta"));
    r.s.sources.push_back({"base", *top, r.t.key("rope_theta")});
  } else {
    r.s.sources.push_back({"base", 10000.0, "transformers' default_theta"});
  }
}

// partial_rotary_factor: HF's dim = int(head_dim * partial_rotary_factor), except for rope_type proportional
// (Gemma 4), whose _compute_proportional_rope_parameters reads it as rope_proportion: the whole head rotates,
// its exponent over head_dim, the pairs past int(F·head_dim // 2) at frequency 0.
void read_partial_rotary(Reading& r, std::int64_t head_dim, RopeScalingType method) {
  const json* prf = r.in_p("partial_rotary_factor");
  std::string prf_key = r.pk + ".partial_rotary_factor";
  if (prf == nullptr && (prf = r.t.get("partial_rotary_factor")) != nullptr)
    prf_key = r.t.key("partial_rotary_factor");
  if (prf == nullptr) return;
  RopeSpec& o = r.s.spec;
  if (method == RopeScalingType::Proportional) {
    o.scaling.partial_rotary_factor = r.t.number(*prf, prf_key);
    r.s.sources.push_back({"partial_rotary_factor", *prf, prf_key + " (proportional: F of the pairs turn)"});
    return;
  }
  try {
    o.scaling.partial_rotary_factor = r.t.number(*prf, prf_key);
    o.rotary_dim = partial_rotary_dim(head_dim, *o.scaling.partial_rotary_factor);
  } catch (const InvalidArgument& e) {
    r.t.fail(prf_key, e.what());
  }
  r.s.sources.push_back({"rotary_dim", *o.rotary_dim, fmt::format("int(head_dim * {})", prf_key)});
}

// The rope type as HF names it (rope_type, else the old "type"; su and mrope renamed) and its method.
std::pair<std::string, RopeScalingType> read_type(Reading& r) {
  std::string type = "default", type_key = r.pk + ".rope_type";
  if (const json* v = r.in_p("rope_type")) {
    type = v->is_string() ? v->get<std::string>() : v->dump();
    if (const json* old = r.in_p("type"); old != nullptr && *old != *v)
      r.s.notes.push_back(
          fmt::format("{}.type {} not read: rope_type wins (standardize_rope_params)", r.pk, old->dump()));
  } else if (const json* old = r.in_p("type")) {
    type = old->is_string() ? old->get<std::string>() : old->dump();
    type_key = r.pk + ".type";
  }
  if (type == "su") {
    r.s.notes.push_back(type_key + " su: Phi-3's old name for longrope");
    type = "longrope";
  } else if (type == "mrope") {
    r.s.notes.push_back(type_key + " mrope: default RoPE with mrope_section (configuration_qwen2_5_vl.py)");
    type = "default";
  }
  using T = RopeScalingType;
  static const std::map<std::string, T> kTypes = {
      {"default", T::None},  {"linear", T::Linear},     {"dynamic", T::Dynamic},          {"yarn", T::Yarn},
      {"llama3", T::Llama3}, {"longrope", T::LongRope}, {"proportional", T::Proportional}};
  const auto it = kTypes.find(type);
  if (it == kTypes.end())
    r.t.fail(type_key + " " + type,
             "unsupported rope_type (supported: default, linear, dynamic, yarn, llama3, longrope, "
             "proportional; su, "
             "mrope)");
  if (r.p != nullptr && it->second != T::None) r.s.sources.push_back({"scaling", type, type_key});
  return {type, it->second};
}

// _compute_yarn_parameters: attention_factor wins; mscale counts only with mscale_all_dim (both nonzero);
// `get("beta_fast") or 32`: a zero is the default.
void read_yarn(Reading& r) {
  ScalingSpec& sc = r.s.spec.scaling;
  sc.original_max_position = r.original_l();
  sc.factor = r.factor_or_ratio(*sc.original_max_position);
  sc.attention_factor = r.num("attention_factor");
  // pe-suite's own key: vLLM's and SGLang's reading, the mscale times attention_factor.
  if (const json* v = r.in_p("yarn_attention")) {
    if (!v->is_string() || !pe::parse_yarn_attention(v->get<std::string>()))
      r.t.fail(r.pk + ".yarn_attention", "expected \"replace\" or \"multiply\", got " + v->dump());
    sc.yarn_attention = pe::parse_yarn_attention(v->get<std::string>());
    r.s.sources.push_back({"yarn_attention", *v, r.pk + ".yarn_attention"});
    r.s.notes.push_back(r.pk +
                        ".yarn_attention: pe-suite's own key (HF replaces the mscale by attention_factor)");
  }
  const bool multiply = sc.yarn_attention == YarnAttention::Multiply;
  const auto ms = r.num("mscale"), msa = r.num("mscale_all_dim");
  if ((!sc.attention_factor || multiply) && ms && msa && *ms != 0 && *msa != 0) {
    sc.mscale = ms;
    sc.mscale_all_dim = msa;
  } else if (ms || msa) {
    r.s.notes.push_back(r.pk + ".mscale/mscale_all_dim not used: " +
                        (sc.attention_factor ? "attention_factor given" : "HF uses them only both nonzero"));
  }
  if (auto b = r.num("beta_fast"); b && *b != 0) sc.beta_fast = b;
  if (auto b = r.num("beta_slow"); b && *b != 0) sc.beta_slow = b;
  if (const json* v = r.in_p("truncate")) {
    if (!v->is_boolean()) r.t.fail(r.pk + ".truncate", "expected true or false, got " + v->dump());
    sc.truncate = v->get<bool>();
    r.s.sources.push_back({"truncate", *v, r.pk + ".truncate"});
  }
}

// pe-suite's own seq_len key: the call's length as the engine read it, where it is not max(position_ids) + 1
// (HF's default): a kept cache's length, or an earlier call's (verify_rope names state kept across calls with
// it).
void read_seq_len(Reading& r) {
  const json* v = r.in_p("seq_len");
  if (v == nullptr) return;
  if (!v->is_number_integer() || v->get<std::int64_t>() < 1)
    r.t.fail(r.pk + ".seq_len", "expected an integer >= 1, got " + v->dump());
  r.s.spec.scaling.seq_len = v->get<std::int64_t>();
  r.s.sources.push_back({"seq_len", *v, r.pk + ".seq_len"});
  r.s.notes.push_back(r.pk + ".seq_len: pe-suite's own key (HF reads max(position_ids) + 1)");
}

// LongRoPE's two lists, and pe-suite's own longrope_switch key (HF has none and picks one list per
// sequence): the hypothesis of TGI's switch.
void read_longrope(Reading& r) {
  ScalingSpec& sc = r.s.spec.scaling;
  const std::string& pk = r.pk;
  sc.original_max_position = r.original_l();
  sc.factor = r.factor_or_ratio(*sc.original_max_position);
  sc.attention_factor = r.num("attention_factor");
  for (auto [k, list] :
       {std::pair{"short_factor", &sc.short_factor}, std::pair{"long_factor", &sc.long_factor}}) {
    const json* v = r.in_p(k);
    if (v == nullptr) r.t.fail(pk + "." + k, "required by rope_type longrope");
    if (!v->is_array()) r.t.fail(pk + "." + k, "expected a list of numbers");
    list->emplace();
    for (const json& x : *v) (*list)->push_back(r.t.number(x, pk + "." + k));
    r.s.sources.push_back({k, *v, pk + "." + k});
  }
  if (const json* v = r.in_p("longrope_switch")) {
    if (!v->is_string() || !parse_longrope_switch(v->get<std::string>()))
      r.t.fail(pk + ".longrope_switch", "expected \"per-sequence\" or \"per-token\", got " + v->dump());
    sc.longrope_switch = parse_longrope_switch(v->get<std::string>());
    r.s.sources.push_back({"longrope_switch", *v, pk + ".longrope_switch"});
    r.s.notes.push_back(pk + ".longrope_switch: pe-suite's own key (HF picks one list per sequence)");
  }
  read_seq_len(r);
}

// _compute_dynamic_ntk_parameters reads max_position_embeddings, never original_max_position_embeddings.
// Hunyuan's "alpha" (its modeling code, and vLLM's DynamicNTKAlphaRotaryEmbedding for rope_type dynamic
// with alpha) fixes the base alone; pe-suite's own "dynamic_semantics" key states vLLM's static table.
void read_dynamic(Reading& r, const std::string& type) {
  ScalingSpec& sc = r.s.spec.scaling;
  sc.alpha = r.num("alpha");
  sc.factor = sc.alpha ? r.num("factor") : r.required("factor", type);
  if (r.max_pos == 0 && !sc.alpha)
    r.t.fail(r.t.prefix + "max_position_embeddings", "required by rope_type dynamic (its L)");
  if (r.max_pos > 0) {
    sc.original_max_position = r.max_pos;
    r.s.sources.push_back({"original_max_position", r.max_pos, r.t.key("max_position_embeddings")});
  }
  if (const json* v = r.in_p("dynamic_semantics")) {
    if (!v->is_string() || !pe::parse_dynamic_semantics(v->get<std::string>()))
      r.t.fail(r.pk + ".dynamic_semantics", "expected \"live\" or \"static\", got " + v->dump());
    sc.dynamic_semantics = pe::parse_dynamic_semantics(v->get<std::string>());
    r.s.sources.push_back({"dynamic_semantics", *v, r.pk + ".dynamic_semantics"});
    r.s.notes.push_back(r.pk + ".dynamic_semantics: pe-suite's own key (HF recomputes from the live length)");
  }
  read_seq_len(r);
}

// The keys the method reads (each _compute_*_parameters).
void read_method(Reading& r, RopeScalingType method, const std::string& type) {
  using T = RopeScalingType;
  ScalingSpec& sc = r.s.spec.scaling;
  sc.method = method;
  r.max_pos = r.t.integer("max_position_embeddings");
  if (method == T::Linear) {
    sc.factor = r.required("factor", type);
  } else if (method == T::Dynamic) {
    read_dynamic(r, type);
  } else if (method == T::Proportional) {
    sc.factor = r.num("factor");  // rope_parameters_dict.get("factor", 1.0)
  } else if (method == T::Llama3) {
    sc.factor = r.required("factor", type);
    sc.low_freq_factor = r.required("low_freq_factor", type);
    sc.high_freq_factor = r.required("high_freq_factor", type);
    sc.original_max_position = r.original_l();
  } else if (method == T::Yarn) {
    read_yarn(r);
  } else if (method == T::LongRope) {
    read_longrope(r);
  }
}

// M-RoPE's sections and Qwen3-VL's interleaving.
void read_form(Reading& r) {
  if (const json* v = r.in_p("mrope_section")) {
    r.s.spec.form.mrope_section = integers(*v, r.t, r.pk + ".mrope_section");
    r.s.sources.push_back({"mrope_section", *v, r.pk + ".mrope_section"});
  }
  if (const json* v = r.in_p("mrope_interleaved"); v != nullptr && v->is_boolean() && v->get<bool>()) {
    r.s.spec.form.mrope_layout = MropeLayout::Interleaved;
    r.s.sources.push_back({"mrope_layout", "interleaved", r.pk + ".mrope_interleaved"});
  }
}

// ERNIE-4.5-VL (vLLM's and SGLang's Ernie4_5_VLRotaryEmbedding): the config's freq_allocation pairs for t,
// the rest split evenly between h and w, alternating from pair 0 ([h w h w … t t]); the pairs interleaved
// (is_neox_style False), unless the config states sections itself.
void read_ernie(Reading& r, std::int64_t head_dim) {
  const json* v = r.t.get("freq_allocation");
  if (v == nullptr || r.s.spec.form.mrope_section) return;
  const std::int64_t t = r.t.integer("freq_allocation"), pairs = r.s.spec.rotary_dim.value_or(head_dim) / 2;
  if (t > pairs || (pairs - t) % 2 != 0)
    r.t.fail(r.t.key("freq_allocation"),
             fmt::format("{} t pairs leave {} of the {} pairs, not split evenly between h and w", t,
                         pairs - t, pairs));
  const std::int64_t side = (pairs - t) / 2;
  r.s.spec.form.mrope_section = std::vector<std::int64_t>{t, side, side};
  r.s.spec.form.mrope_layout = MropeLayout::Ernie;
  r.s.sources.push_back({"mrope_section", json::array({t, side, side}), r.t.key("freq_allocation")});
  r.s.sources.push_back({"mrope_layout", "ernie", r.t.key("freq_allocation")});
  r.s.notes.push_back(fmt::format(
      "ERNIE-4.5-VL's 3-D RoPE from freq_allocation {}: mrope_section t,h,w = {},{},{} in the ernie layout "
      "([h w h w ... t t], vLLM's Ernie4_5_VLRotaryEmbedding)",
      t, t, side, side));
  if (!r.s.spec.layout) {
    r.s.spec.layout = Layout::Interleaved;
    r.s.sources.push_back({"layout", "interleaved", r.t.key("freq_allocation")});
    r.s.notes.push_back("layout interleaved, ERNIE-4.5-VL's (is_neox_style False); --layout overrides");
  }
}

}  // namespace

HfRopeSetting rotary(const Text& t, const Head& h, const json* p, const std::string& pk, bool flat,
                     std::set<std::string>& not_read) {
  HfRopeSetting s;
  s.spec.head_dim = s.spec.rotary_dim = h.head_dim;
  s.spec.base = 10000.0;
  s.spec.layout = h.layout;
  s.mla = h.mla;
  s.mla_nope_head_dim = h.mla_nope_head_dim;
  s.sources = h.sources;
  s.notes = h.notes;
  Reading r{t, p, pk, flat, s, {}};
  read_base(r);
  const auto [type, method] = read_type(r);
  read_partial_rotary(r, h.head_dim, method);
  read_method(r, method, type);
  read_form(r);
  read_ernie(r, h.head_dim);
  if (p != nullptr) {
    for (const auto& [k, v] : p->items()) {
      if (r.read.count(k) == 0 && k != "type" && k != "rope_type") not_read.insert(pk + "." + k);
    }
  }
  return s;
}

}  // namespace pe::check::detail
