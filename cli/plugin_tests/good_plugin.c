/* A correct test plugin of both families (pe/plugin.h), double throughout, reading the plan's
 * frequency array: rope.plugtest_f64 and sinusoidal.plugtest_f64 under rope.scalar_f64's and
 * sinusoidal.scalar_f64's contracts (double angle p·θ'_j: c1 = 2.03; glibc sin/cos 1 ULP and, for
 * RoPE, the rotation in double: ck = 3.001 (tables: ck = 1); one rounding into float32: c0 = 1).
 * Built with PLUGTEST_NAN, the same plugin well formed but writing NaN into the first channel of every
 * rotated pair: pe-suite must report it, not crash. Built with PLUGTEST_CRASH or PLUGTEST_HANG, a RoPE
 * kernel that raises SIGSEGV or never returns once a position reaches 1000 (PLUGTEST_ABORT: calls abort()):
 * the census must name the kernel, the signal (or the time limit) and the case, and go on. Built with
 * PLUGTEST_PAST_ROW, PLUGTEST_HEAD_GAP, PLUGTEST_PASS_THROUGH or PLUGTEST_BEFORE, a RoPE kernel that also
 * writes where it must not (one element past every row; rows placed at h * head_dim, ignoring head_stride;
 * the first pass-through channel after the rotated ones negated; one element before the first row): the
 * guard zones must name where. Built with PLUGTEST_OFFSET_BY_ONE (positions read 1-based: p + 1),
 * PLUGTEST_PAIRS_INTERLEAVED (pairs (2j, 2j+1) whatever the layout) or PLUGTEST_NO_ATTENTION_FACTOR (the
 * plan's attention factor never applied), numbers wrong the way engines have had them wrong: verify's
 * failure reports must show each minimal case with the diagnosis that names it. Built with
 * PLUGTEST_RENAMED, the same kernels named rope.plugtest_b_f64 and sinusoidal.plugtest_b_f64: a second
 * plugin loaded beside the first (a sweep over two plugins). Built with PLUGTEST_VISION_INDEX, the
 * frequency formed from the plan's pieces with pair j's own index (base^(-2j/frequency_dim)): right for
 * text RoPE and M-RoPE, wrong for the 2-D vision forms: every form a kernel runs must be drawn. Built with
 * PLUGTEST_FROM_CONFIG, rope.plugtest_config: frequencies and attention factor formed from the raw config
 * (config_frequencies.h, ABI version 3's fields), its contract's c1 that of a frequency formed in double. */
#include <math.h>
#include <pe/plugin.h>
#if defined(PLUGTEST_FROM_CONFIG)
#include "config_frequencies.h"
#define PLUGTEST_NAME(family) family ".plugtest_config"
#define PLUGTEST_C1 40 /* config_frequencies.h */
#elif defined(PLUGTEST_RENAMED)
#define PLUGTEST_NAME(family) family ".plugtest_b_f64"
#else
#define PLUGTEST_NAME(family) family ".plugtest_f64"
#endif
#ifndef PLUGTEST_C1
#define PLUGTEST_C1 2.03
#endif
#if defined(PLUGTEST_CRASH) || defined(PLUGTEST_HANG) || defined(PLUGTEST_ABORT)
#define PLUGTEST_MISBEHAVES 1
#include <signal.h>
#include <stdlib.h>
static void misbehave(int64_t position) {
  volatile int forever = 1;
  if (position < 1000) return;
#ifdef PLUGTEST_CRASH
  raise(SIGSEGV);
#endif
#ifdef PLUGTEST_ABORT
  abort();
#endif
  while (forever) {
  }
}
#endif

#if defined(PLUGTEST_PAST_ROW) || defined(PLUGTEST_PASS_THROUGH) || defined(PLUGTEST_BEFORE)
#define PLUGTEST_STRAYS 1
/* x's element `to` (may lie before the buffer's start: the planted bugs) set from element `from`, negated. */
static void stray_write(const pe_buffer* x, ptrdiff_t to, ptrdiff_t from) {
  if (x->dtype == PE_DTYPE_F64) {
    ((double*)x->data)[to] = -((double*)x->data)[from] - 1;
  } else {
    ((float*)x->data)[to] = -((float*)x->data)[from] - 1;
  }
}
#endif

#ifdef PLUGTEST_NAN
static void put_nan(const pe_buffer* x, size_t at) {
  if (x->dtype == PE_DTYPE_F64) {
    ((double*)x->data)[at] = NAN;
  } else {
    ((float*)x->data)[at] = NAN;
  }
}
#endif

static void rotate(void* user_data, const pe_rope_plan* plan, const pe_rope_batch* batch, int32_t direction,
                   const pe_buffer* x) {
  size_t t, h, j;
  (void)user_data;
  for (t = 0; t < batch->tokens; ++t) {
    for (j = 0; j < plan->n_pairs; ++j) {
#ifdef PLUGTEST_OFFSET_BY_ONE
      const int64_t p = batch->positions[plan->axis_of_pair[j] * batch->tokens + t] + 1;
#else
      const int64_t p = batch->positions[plan->axis_of_pair[j] * batch->tokens + t];
#endif
#ifdef PLUGTEST_MISBEHAVES
      misbehave(p);
#endif
#if defined(PLUGTEST_FROM_CONFIG)
      const double angle = (double)p * frequency(plan, j);
#elif defined(PLUGTEST_VISION_INDEX)
      /* The pieces, with the frequency's index taken as the pair's: right for text RoPE and M-RoPE, wrong
       * for the 2-D vision forms, whose pairs index their own tables. */
      const double angle =
          (double)p * plan->gain[j] * pow(plan->base, -2.0 * (double)j / (double)plan->frequency_dim);
#else
      const double angle = (double)p * plan->inv_freq[j];
#endif
#if defined(PLUGTEST_NO_ATTENTION_FACTOR)
      const double gain = 1;
#elif defined(PLUGTEST_FROM_CONFIG)
      const double gain = attention_of(plan);
#else
      const double gain = plan->attention_factor;
#endif
#ifdef PLUGTEST_PAIRS_INTERLEAVED
      const int halfsplit = 0;
#else
      const int halfsplit = plan->layout == PE_LAYOUT_HALFSPLIT;
#endif
      const double s = direction * sin(angle) * gain, c = cos(angle) * gain;
      const size_t first = plan->rotary_offset + (halfsplit ? j : 2 * j);
      const size_t second = first + (halfsplit ? plan->n_pairs : 1);
      for (h = 0; h < batch->heads; ++h) {
#ifdef PLUGTEST_HEAD_GAP
        const size_t row = t * batch->token_stride + h * plan->head_dim;
#else
        const size_t row = t * batch->token_stride + h * batch->head_stride;
#endif
        if (x->dtype == PE_DTYPE_F64) {
          double* y = (double*)x->data + row;
          const double u = y[first], v = y[second];
          y[first] = u * c - v * s;
          y[second] = u * s + v * c;
        } else {
          float* y = (float*)x->data + row;
          const double u = y[first], v = y[second];
          y[first] = (float)(u * c - v * s);
          y[second] = (float)(u * s + v * c);
        }
#ifdef PLUGTEST_NAN
        put_nan(x, row + first);
#endif
      }
    }
#ifdef PLUGTEST_STRAYS
    for (h = 0; h < batch->heads; ++h) {
      const ptrdiff_t row = (ptrdiff_t)(t * batch->token_stride + h * batch->head_stride);
      const ptrdiff_t end = (ptrdiff_t)plan->head_dim,
                      rotated_end = (ptrdiff_t)(plan->rotary_offset + plan->rotary_dim);
      (void)row, (void)end, (void)rotated_end;
#ifdef PLUGTEST_PAST_ROW
      stray_write(x, row + end, row + end - 1);
#endif
#ifdef PLUGTEST_PASS_THROUGH
      if (rotated_end < end) stray_write(x, row + rotated_end, row + rotated_end);
#endif
#ifdef PLUGTEST_BEFORE
      if (row == 0) stray_write(x, -1, 0);
#endif
    }
#endif
  }
}

/* Channel of pair i's sin (cos: + offset). */
static size_t sin_channel(const pe_sinusoidal_plan* plan, size_t i, size_t* cos_offset) {
  *cos_offset = plan->layout == PE_LAYOUT_INTERLEAVED ? 1 : plan->n_pairs;
  return plan->layout == PE_LAYOUT_INTERLEAVED ? 2 * i : i;
}

static void put(const pe_buffer* b, size_t at, double v, int add) {
  if (b->dtype == PE_DTYPE_F64) {
    double* y = (double*)b->data + at;
    *y = add ? *y + v : v;
  } else {
    float* y = (float*)b->data + at;
    *y = (float)(add ? (double)*y + v : v);
  }
}

static void fill(const pe_sinusoidal_plan* plan, const int64_t* positions, size_t n, const uint8_t* padding,
                 const pe_buffer* out, int add) {
  size_t r, i, offset;
  for (r = 0; r < n; ++r) {
    if (padding != NULL && padding[r] != 0) continue;
    for (i = 0; i < plan->n_pairs; ++i) {
      const double angle = (double)positions[r] * plan->inv_freq[i];
      const size_t at = r * plan->dim + sin_channel(plan, i, &offset);
      put(out, at, sin(angle), add);
      put(out, at + offset, cos(angle), add);
    }
  }
}

static void table(void* user_data, const pe_sinusoidal_plan* plan, const int64_t* positions, size_t n,
                  const pe_buffer* out) {
  (void)user_data;
  fill(plan, positions, n, NULL, out, 0);
}

static void add(void* user_data, const pe_sinusoidal_plan* plan, const int64_t* positions, size_t n,
                const uint8_t* padding, const pe_buffer* embeddings) {
  (void)user_data;
  fill(plan, positions, n, padding, embeddings, 1);
}

PE_PLUGIN_EXPORT int pe_plugin_register(const pe_host* host) {
  pe_kernel rope = {
      .struct_size = sizeof(pe_kernel),
      .family = PE_FAMILY_ROPE,
      .name = PLUGTEST_NAME("rope"),
      .contract =
          {
              .layouts = PE_BIT(PE_LAYOUT_INTERLEAVED) | PE_BIT(PE_LAYOUT_HALFSPLIT),
              .outputs = PE_BIT(PE_DTYPE_F32) | PE_BIT(PE_DTYPE_F64),
              .angle_type = PE_DTYPE_F64,
              .compute_type = PE_DTYPE_F64,
              .max_position = (int64_t)1 << 31,
              .max_base = 1e12,
              .max_input_abs = 0x1p126,
              .c0 = 1,
              .ck = 3.001,
              .c1 = PLUGTEST_C1,
              .ca = 3,
              .depends_on = "glibc sin/cos <= 1 ULP",
          },
      .rope_apply = rotate,
  };
  pe_kernel sinusoidal = rope;
  sinusoidal.family = PE_FAMILY_SINUSOIDAL;
  sinusoidal.name = PLUGTEST_NAME("sinusoidal");
  sinusoidal.contract.layouts = PE_BIT(PE_LAYOUT_INTERLEAVED) | PE_BIT(PE_LAYOUT_CONCATENATED);
  sinusoidal.contract.max_input_abs = 1e30;
  sinusoidal.contract.ck = 1;
  sinusoidal.rope_apply = NULL;
  sinusoidal.sinusoidal_table = table;
  sinusoidal.sinusoidal_add = add;
  return pe_register_kernel(host, &rope) || pe_register_kernel(host, &sinusoidal);
}
