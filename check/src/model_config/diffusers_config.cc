// A diffusers model's config.json read into the sinusoidal spec (pe/check/hf_config.h): the keys its
// classes pass to the embeddings, each from diffusers' published code (v0.31). UNet2DConditionModel
// (SD 1.x/2.x, SDXL) and the other UNets: Timesteps(block_out_channels[0], flip_sin_to_cos, freq_shift).
// PixArt, DiT and SD3 transformers: PatchEmbed(height=width=sample_size, patch_size, interpolation_scale,
// pos_embed_max_size): the grid is pos_embed_max_size cells a side where set (SD3), else
// sample_size/patch_size; base_size is sample_size/patch_size; an interpolation_scale of null is
// max(sample_size // 64, 1) (PixArt's and Transformer2DModel's rule), an absent one PatchEmbed's 1.
// CogVideoX: get_3d_sincos_pos_embed over (sample_frames − 1)/temporal_compression_ratio + 1 frames of
// sample_height/patch_size × sample_width/patch_size cells, spatial_interpolation_scale (default 1.875) and
// temporal_interpolation_scale (default 1). A value the caller gave wins; every value taken is listed with
// its key.
#include <fmt/format.h>

#include <algorithm>

#include "pe/check/hf_config.h"

namespace pe::check {
namespace {

const nlohmann::json* key(const nlohmann::json& c, const char* k) {
  const auto it = c.find(k);
  return it == c.end() || it->is_null() ? nullptr : &*it;
}

std::int64_t whole(const nlohmann::json& v, const char* k, const std::string& source) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
    throw BadRequest(fmt::format("{}: {} must be a positive integer, got {}", source, k, v.dump()),
                     "hf_config");
  return v.get<std::int64_t>();
}

double number(const nlohmann::json& v, const char* k, const std::string& source) {
  if (!v.is_number())
    throw BadRequest(fmt::format("{}: {} must be a number, got {}", source, k, v.dump()), "hf_config");
  return v.get<double>();
}

}  // namespace

SinusoidalSpec sinusoidal_spec_from(const HfSource& hf, SinusoidalSpec s, std::vector<HfValue>& taken) {
  const nlohmann::json& c = hf.config;
  if (!c.is_object()) throw BadRequest(hf.source + ": expected a JSON object", "hf_config");
  const auto take = [&](auto& field, const char* name, const char* k, auto value) {
    if (field) return;
    field = value;
    taken.push_back({name, nlohmann::json(value), k});
  };
  if (const auto* v = key(c, "flip_sin_to_cos")) {
    if (!v->is_boolean())
      throw BadRequest(fmt::format("{}: flip_sin_to_cos must be true or false, got {}", hf.source, v->dump()),
                       "hf_config");
    take(s.flip_sin_to_cos, "flip_sin_to_cos", "flip_sin_to_cos", v->get<bool>());
  }
  for (const char* k : {"freq_shift", "downscale_freq_shift"})
    if (const auto* v = key(c, k))
      take(s.downscale_freq_shift, "downscale_freq_shift", k, number(*v, k, hf.source));
  const auto* patch = key(c, "patch_size");
  if (patch && key(c, "sample_frames") && key(c, "sample_height") && key(c, "sample_width")) {
    const std::int64_t p = whole(*patch, "patch_size", hf.source);
    const std::int64_t ratio =
        key(c, "temporal_compression_ratio")
            ? whole(c["temporal_compression_ratio"], "temporal_compression_ratio", hf.source)
            : 4;  // CogVideoXTransformer3DModel's default
    const std::int64_t frames = (whole(c["sample_frames"], "sample_frames", hf.source) - 1) / ratio + 1;
    take(s.grid, "grid", "sample_frames, temporal_compression_ratio, sample_height, sample_width, patch_size",
         std::vector<std::int64_t>{frames, whole(c["sample_height"], "sample_height", hf.source) / p,
                                   whole(c["sample_width"], "sample_width", hf.source) / p});
    const auto* spatial = key(c, "spatial_interpolation_scale");
    take(s.interpolation_scale, "interpolation_scale",
         spatial ? "spatial_interpolation_scale" : "spatial_interpolation_scale (CogVideoX's default)",
         spatial ? number(*spatial, "spatial_interpolation_scale", hf.source) : 1.875);
    const auto* temporal = key(c, "temporal_interpolation_scale");
    take(s.temporal_interpolation_scale, "temporal_interpolation_scale",
         temporal ? "temporal_interpolation_scale" : "temporal_interpolation_scale (CogVideoX's default)",
         temporal ? number(*temporal, "temporal_interpolation_scale", hf.source) : 1.0);
  } else if (patch && key(c, "sample_size") && key(c, "sample_size")->is_number_integer()) {
    const std::int64_t sample = whole(c["sample_size"], "sample_size", hf.source);
    const std::int64_t n = sample / whole(*patch, "patch_size", hf.source);
    const auto* max_size = key(c, "pos_embed_max_size");
    const std::int64_t side = max_size ? whole(*max_size, "pos_embed_max_size", hf.source) : n;
    take(s.grid, "grid", max_size ? "pos_embed_max_size" : "sample_size/patch_size",
         std::vector<std::int64_t>{side, side});
    take(s.base_size, "base_size", "sample_size/patch_size (PatchEmbed's height // patch_size)",
         static_cast<double>(n));
    if (c.contains("interpolation_scale")) {
      const auto* v = key(c, "interpolation_scale");
      take(s.interpolation_scale, "interpolation_scale",
           v ? "interpolation_scale" : "interpolation_scale null: max(sample_size // 64, 1)",
           v ? number(*v, "interpolation_scale", hf.source)
             : static_cast<double>(std::max<std::int64_t>(sample / 64, 1)));
    }
  }
  if (taken.empty())
    throw BadRequest(fmt::format("{}: no sinusoidal key (flip_sin_to_cos, freq_shift, patch_size with "
                                 "sample_size or sample_frames/height/width): not a diffusers model's config",
                                 hf.source),
                     "hf_config");
  return s;
}

}  // namespace pe::check
