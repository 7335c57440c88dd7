/* A float32 RoPE kernel that forms Llama-3's frequencies from the model's config itself, as engines do
 * (pe/plugin.h ABI version 2: pe_rope_plan.config), rather than reading pe-suite's scaled inv_freq:
 * Hugging Face's _compute_llama3_parameters, written from modeling_rope_utils.py. For any other method
 * (and a vision form, or an attention factor the config gives) it takes the plan's frequency (pe-suite's,
 * rounded once to float). Registered as
 * rope.llama3_c; pe-suite then checks the frequencies it forms against the exact reference under every
 * Llama-3 config the properties draw and every --hf-config the census is given.
 *
 * Built with LLAMA3_ORIGINAL_8192, the same kernel with Llama-3.1's original_max_position_embeddings
 * (8192) written in rather than read from the config: right for Llama-3.1, wrong for every model that
 * states another (the mistake pe-suite must catch and name).
 *
 * The frequency is formed in double and rounded to float once (the smoothing's difference
 * L/λ - low_freq_factor cancels, magnifying the error of λ by up to 1 + (factor - 1)·low/(high - low): in
 * float that reaches a hundred units for configs HF accepts; in double it stays far below one float unit),
 * then the angle, sin, cos and rotation in float as rope.engine_c's (examples/plugin_c/engine_rope.c):
 * its contract, c1 = 22.2 per unit of |angle| covering one more float rounding of the frequency. Every
 * rope_type forms its unscaled frequency the same way, so that Llama-3 at factor 1 gives the unscaled bits.
 */
#include <math.h>
#include <pe/plugin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PI 3.14159265358979323846

/* The frequency of pair j: Llama-3's and the unscaled one from the raw config, else the plan's. */
static float frequency(const pe_rope_plan* plan, size_t j) {
  const pe_rope_config* cfg = plan->config;
  double inv_freq, wavelen, low_wavelen, high_wavelen, original, factor, smooth;
  const int llama3 = cfg != NULL && strcmp(cfg->rope_type, "llama3") == 0;
  if (cfg == NULL || cfg->vision != NULL || cfg->attention_factor_given ||
      (!llama3 && strcmp(cfg->rope_type, "default") != 0))
    return (float)plan->inv_freq[j];
  /* _compute_default_rope_parameters: 1 / base^(2j/d). */
  inv_freq = 1.0 / pow(cfg->rope_theta, (double)(2 * j) / (double)plan->rotary_dim);
  if (!llama3) return (float)inv_freq;
#ifdef LLAMA3_ORIGINAL_8192
  original = 8192.0; /* the mistake: Llama-3.1's value, not the config's */
#else
  original = (double)cfg->original_max_position_embeddings;
#endif
  factor = cfg->factor;
  low_wavelen = original / cfg->low_freq_factor;
  high_wavelen = original / cfg->high_freq_factor;
  wavelen = 2.0 * PI / inv_freq;
  if (wavelen > low_wavelen) return (float)(inv_freq / factor); /* the low frequencies: interpolated */
  if (wavelen < high_wavelen) return (float)inv_freq;           /* the high frequencies: kept */
  smooth = (original / wavelen - cfg->low_freq_factor) / (cfg->high_freq_factor - cfg->low_freq_factor);
  return (float)((1.0 - smooth) * inv_freq / factor + smooth * inv_freq);
}

static void llama3_rope(void* user_data, const pe_rope_plan* plan, const pe_rope_batch* batch,
                        int32_t direction, const pe_buffer* x) {
  const int halfsplit = plan->layout == PE_LAYOUT_HALFSPLIT;
  const float sign = (float)direction, attention = (float)plan->attention_factor;
  float* data = (float*)x->data; /* the contract declares f32 only */
  size_t t, j, h;
  (void)user_data;
  for (j = 0; j < plan->n_pairs; ++j) {
    const float inv_freq = frequency(plan, j);
    for (t = 0; t < batch->tokens; ++t) {
      const int64_t p = batch->positions[plan->axis_of_pair[j] * batch->tokens + t];
      const float angle = inv_freq * (float)p;
      float s = sinf(angle) * sign, c = cosf(angle);
      if (attention != 1.0f) {
        s *= attention;
        c *= attention;
      }
      for (h = 0; h < batch->heads; ++h) {
        float* row = data + t * batch->token_stride + h * batch->head_stride + plan->rotary_offset;
        const size_t a = halfsplit ? j : 2 * j, b = halfsplit ? j + plan->n_pairs : 2 * j + 1;
        const float u = row[a], v = row[b];
        row[a] = u * c - v * s;
        row[b] = u * s + v * c;
      }
    }
  }
}

PE_PLUGIN_EXPORT int pe_plugin_register(const pe_host* host) {
  const pe_kernel kernel = {
      .struct_size = sizeof(pe_kernel),
      .family = PE_FAMILY_ROPE,
      .name = "rope.llama3_c",
      .contract =
          {
              .layouts = PE_BIT(PE_LAYOUT_INTERLEAVED) | PE_BIT(PE_LAYOUT_HALFSPLIT),
              .outputs = PE_BIT(PE_DTYPE_F32),
              .angle_type = PE_DTYPE_F32,
              .compute_type = PE_DTYPE_F32,
              .max_position = (int64_t)1 << 24,
              .max_base = 1e7,
              .max_input_abs = 0x1p126,
              .c0 = 1,
              .ck = 3.001,
              .c1 = 22.2,
              .ca = 3,
              .c1_gain = 2.001,
              .depends_on = "glibc powf, sinf, cosf <= 1 ULP",
          },
      .rope_apply = llama3_rope,
  };
  if (host->abi_version < 2) {
    host->report_error(host->context, "rope.llama3_c reads the model's config: it needs pe/plugin.h ABI 2");
    return 1;
  }
  return pe_register_kernel(host, &kernel);
}
