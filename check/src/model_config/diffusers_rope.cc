// A diffusers transformer's config.json read into the axial RoPE its class builds (pe/rope_form.h), each rule
// from diffusers' published code (v0.32), every value listed with its key or the class default it is:
//   FluxTransformer2DModel          FluxPosEmbed(theta=10000, axes_dim=axes_dims_rope), default (16, 56, 56)
//   HunyuanVideoTransformer3DModel  HunyuanVideoRotaryPosEmbed(rope_axes_dim, rope_theta), defaults
//                                   (16, 56, 56) and 256
//   WanTransformer3DModel           WanRotaryPosEmbed: h = w = 2·(d // 6), t = d − h − w, theta 10000
//   CogVideoXTransformer3DModel     with use_rotary_positional_embeddings: get_3d_rotary_pos_embed(d):
//                                   t = d // 4, h = w = d // 8 · 3, theta 10000
// d is attention_head_dim. All four rotate by apply_rotary_emb's complex view (use_real_unbind_dim=-1):
// interleaved pairs, each axis's channels contiguous.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hf_config_detail.h"

namespace pe::check::detail {
namespace {

struct DiffusersRope {
  std::vector<std::int64_t> axes_dim;
  double theta = 10000;
  std::vector<HfValue> sources;
};

std::vector<std::int64_t> dims_of(const json& v, const std::string& k, const std::string& source) {
  std::vector<std::int64_t> out;
  if (!v.is_array() || v.empty())
    throw BadRequest(fmt::format("{}: {} must be a list of channels per axis, got {}", source, k, v.dump()),
                     "hf_config");
  for (const json& e : v) {
    if (!e.is_number_integer())
      throw BadRequest(fmt::format("{}: {} must hold integers, got {}", source, k, v.dump()), "hf_config");
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

// The class's axes and theta from its own keys or defaults; nullopt for a class without axial RoPE.
std::optional<DiffusersRope> axial_of(const json& c, const std::string& cls, std::int64_t d,
                                      const std::string& source) {
  DiffusersRope r;
  const auto listed = [&](const char* k, std::vector<std::int64_t> fallback) {
    if (present(c, k)) {
      r.axes_dim = dims_of(c[k], k, source);
      r.sources.push_back({"axes_dim", c[k], k});
    } else {
      r.axes_dim = std::move(fallback);
      r.sources.push_back({"axes_dim", r.axes_dim, cls + " default"});
    }
  };
  if (cls == "FluxTransformer2DModel") {
    listed("axes_dims_rope", {16, 56, 56});
    r.sources.push_back({"base", r.theta, "FluxPosEmbed's theta"});
  } else if (cls == "HunyuanVideoTransformer3DModel") {
    listed("rope_axes_dim", {16, 56, 56});
    if (present(c, "rope_theta") && !c["rope_theta"].is_number())
      throw BadRequest(fmt::format("{}: rope_theta must be a number, got {}", source, c["rope_theta"].dump()),
                       "hf_config");
    r.theta = present(c, "rope_theta") ? c["rope_theta"].get<double>() : 256.0;
    r.sources.push_back({"base", r.theta, present(c, "rope_theta") ? "rope_theta" : cls + " default"});
  } else if (cls == "WanTransformer3DModel") {
    const std::int64_t hw = 2 * (d / 6);
    r.axes_dim = {d - 2 * hw, hw, hw};
    r.sources.push_back({"axes_dim", r.axes_dim, "attention_head_dim (WanRotaryPosEmbed's t, h, w split)"});
    r.sources.push_back({"base", r.theta, "WanRotaryPosEmbed's theta"});
  } else if (cls == "CogVideoXTransformer3DModel" && present(c, "use_rotary_positional_embeddings") &&
             c["use_rotary_positional_embeddings"] == true) {
    r.axes_dim = {d / 4, d / 8 * 3, d / 8 * 3};
    r.sources.push_back({"axes_dim", r.axes_dim, "attention_head_dim (get_3d_rotary_pos_embed's split)"});
    r.sources.push_back({"base", r.theta, "get_3d_rotary_pos_embed's theta"});
  } else {
    return std::nullopt;
  }
  return r;
}

}  // namespace

std::optional<Layers> diffusers_rope_layers(const json& c, const std::string& source) {
  if (!present(c, "_class_name") || !c["_class_name"].is_string()) return std::nullopt;
  const std::string cls = c["_class_name"].get<std::string>();
  if (!present(c, "attention_head_dim") || !c["attention_head_dim"].is_number_integer() ||
      c["attention_head_dim"].get<std::int64_t>() < 2)
    return std::nullopt;
  const std::int64_t d = c["attention_head_dim"].get<std::int64_t>();
  std::optional<DiffusersRope> r = axial_of(c, cls, d, source);
  if (!r) return std::nullopt;
  if (!(r->theta > 1))
    throw BadRequest(fmt::format("{}: rope_theta must be a number > 1, got {}", source, r->theta),
                     "hf_config");
  HfRopeSetting s;
  s.name = "rope";
  s.spec.base = r->theta;
  s.spec.head_dim = d;
  s.spec.rotary_dim = d;
  s.spec.layout = Layout::Interleaved;
  s.spec.form.axes_dim = r->axes_dim;
  s.sources = std::move(r->sources);
  s.sources.push_back({"head_dim", d, "attention_head_dim"});
  s.sources.push_back({"layout", "interleaved", "apply_rotary_emb's complex view (use_real_unbind_dim=-1)"});
  s.notes.push_back(fmt::format("{}: axial RoPE, axes_dim {}, one ladder per axis", cls,
                                fmt::join(*s.spec.form.axes_dim, ",")));
  Layers out;
  out.settings.push_back(std::move(s));
  return out;
}

}  // namespace pe::check::detail
