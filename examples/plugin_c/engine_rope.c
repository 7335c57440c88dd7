/* A float32 RoPE kernel written the way engines write it (Hugging Face's LlamaRotaryEmbedding, vLLM's
 * and FlashInfer's CPU paths): inv_freq = 1 / powf(base, 2j/d), the angle p·inv_freq in float, sinf
 * and cosf, the rotation in float. The C99 twin of examples/consumer/engine_rope.cc, the same
 * arithmetic in the same order, as a pe-suite plugin registering the variant rope.engine_c.
 *
 * Contract (the consumer example's, derived as pe-suite's docs/contracts.md does for rope.torch_f32):
 * inv_freq within (ln b + 4)·2^-24 for b <= 1e7, the float angle's product and position: c1 = ln(1e7)
 * + 6 = 22.2 per unit of |angle| in float; sinf/cosf 1 ULP and the rotation's two products and sum:
 * ck = 3.001; a scaling's gain one more float product: c1_gain = 2.001; the attention factor one
 * product in float: ca = 3; the output is the compute type, so nothing more is rounded (c0 = 1 is
 * never used for f32). Positions up to 2^24, where float still holds every integer. */
#include <math.h>
#include <pe/plugin.h>
#include <stddef.h>
#include <stdint.h>

/* Pairs whose sin and cos are formed before the rows are rotated by them (pe-suite's driver's chunk). */
#define CHUNK 64

/* sin and cos of pairs j0 .. j0+n-1 of token t, times the attention factor. */
static void engine_sincos(const pe_rope_plan* plan, const pe_rope_batch* batch, size_t t, size_t j0, size_t n,
                          float* s, float* c) {
  const float attention = (float)plan->attention_factor;
  size_t k;
  for (k = 0; k < n; ++k) {
    const size_t j = j0 + k;
    const int64_t p = batch->positions[plan->axis_of_pair[j] * batch->tokens + t];
    const float exponent = (float)(2 * plan->frequency_index[j]) / (float)plan->frequency_dim;
    float inv_freq = 1.0f / powf((float)plan->base, exponent);
    float angle;
    inv_freq *= (float)plan->gain[j]; /* the scaling's per-pair gain (1 without one) */
    angle = inv_freq * (float)p;
#ifdef ENGINE_ROPE_FLIP_SIGN
    angle = -angle; /* the deliberate mistake */
#endif
    s[k] = sinf(angle);
    c[k] = cosf(angle);
    if (attention != 1.0f) {
      s[k] *= attention;
      c[k] *= attention;
    }
  }
}

/* The rotation of n pairs of one row, in float: one loop per pairing, each with a constant stride, so
 * that both compile to plain vector loops (as pe-suite's driver does; one loop with the stride in a
 * variable left the interleaved one scalar, 1.6x slower). */
static void rotate_interleaved(float* a, size_t n, const float* s, const float* c, float sign) {
  size_t k;
  for (k = 0; k < n; ++k) {
    const float sk = sign * s[k], u = a[2 * k], v = a[2 * k + 1];
    a[2 * k] = u * c[k] - v * sk;
    a[2 * k + 1] = u * sk + v * c[k];
  }
}

static void rotate_halfsplit(float* a, size_t partner, size_t n, const float* s, const float* c, float sign) {
  size_t k;
  for (k = 0; k < n; ++k) {
    const float sk = sign * s[k], u = a[k], v = a[k + partner];
    a[k] = u * c[k] - v * sk;
    a[k + partner] = u * sk + v * c[k];
  }
}

static void engine_rope(void* user_data, const pe_rope_plan* plan, const pe_rope_batch* batch,
                        int32_t direction, const pe_buffer* x) {
  const int halfsplit = plan->layout == PE_LAYOUT_HALFSPLIT;
  const float sign = (float)direction;
  float* data = (float*)x->data; /* the contract declares f32 only: nothing else reaches here */
  float s[CHUNK], c[CHUNK];
  size_t t, j0, h;
  (void)user_data;
  for (t = 0; t < batch->tokens; ++t) {
    for (j0 = 0; j0 < plan->n_pairs; j0 += CHUNK) {
      const size_t n = plan->n_pairs - j0 < CHUNK ? plan->n_pairs - j0 : CHUNK;
      engine_sincos(plan, batch, t, j0, n, s, c);
      for (h = 0; h < batch->heads; ++h) {
        float* row = data + t * batch->token_stride + h * batch->head_stride + plan->rotary_offset;
        if (halfsplit) {
          rotate_halfsplit(row + j0, plan->n_pairs, n, s, c, sign);
        } else {
          rotate_interleaved(row + 2 * j0, n, s, c, sign);
        }
      }
    }
  }
}

PE_PLUGIN_EXPORT int pe_plugin_register(const pe_host* host) {
  const pe_kernel kernel = {
      .struct_size = sizeof(pe_kernel),
      .family = PE_FAMILY_ROPE,
      .name = "rope.engine_c",
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
      .rope_apply = engine_rope,
  };
  return pe_register_kernel(host, &kernel);
}
