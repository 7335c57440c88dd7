/* good_plugin.c's frequencies and attention factor under PLUGTEST_FROM_CONFIG (rope.plugtest_config): formed
 * from the raw config (pe_rope_config), as an engine does:
 * HF's default, linear and live dynamic; with ABI version 3's fields, the engines' other readings and
 * forms, which every version names by rope types of their own: "axial" (axes_dim, each axis its own
 * ladder), "dynamic_static" (vLLM's and SGLang's one table at factor·L), "dynamic_alpha" (Hunyuan's alpha),
 * "yarn_multiply" (vLLM's attention factor times its mscale), and proportional's partial_rotary_factor; any
 * other rope_type, and a config it does not find, from the plan's inv_freq and attention factor.
 * The rotation is good_plugin.c's, double throughout, rounded once into the output.
 * Built with -DPE_PLUGIN_ABI_VERSION=2, the same source registers with version 2: the names come without
 * their parameters, so it reads inv_freq for them and passes. Built with CONFIG_MISREADS, a version-3 kernel
 * that takes each of those names for HF's method of the same family (axial as text RoPE, dynamic_static and
 * dynamic_alpha as HF's live dynamic, yarn_multiply as HF's yarn): it fails on each, and check names the
 * reading it computed.
 * Contract: the double angle of a frequency formed here, base' <= 1e12: fl(2k/d) moves b^e by ln b·2^-53
 * (<= 27.7), pow and the reciprocal 3·2^-53, base' itself from pow(ratio, d/(d-2)) and a product (its
 * relative error, <= 8·2^-53 at ratio <= 10^6, enters the frequency times 2k/d < 1): c1 = 40; the rotation
 * in double, ck = 3.001; one rounding into the output, c0 = 1. */
#ifndef PLUGTEST_CONFIG_FREQUENCIES_H_
#define PLUGTEST_CONFIG_FREQUENCIES_H_
#include <math.h>
#include <pe/plugin.h>
#include <string.h>

static int is(const pe_rope_config* c, const char* type) { return strcmp(c->rope_type, type) == 0; }

#if PE_PLUGIN_ABI_VERSION >= 3
#define CONFIG_HAS_VERSION3 1
#endif

/* HF's get_mscale and YaRN's default attention (DeepSeek's ratio where both mscales are given). */
static double yarn_mscale(double factor, double mscale) {
  return factor <= 1 ? 1.0 : 0.1 * mscale * log(factor) + 1.0;
}

static double attention_of(const pe_rope_plan* plan) {
  const pe_rope_config* c = plan->config;
  double mscale;
  int multiply;
  if (c == NULL || !(is(c, "yarn") || is(c, "yarn_multiply"))) return plan->attention_factor;
#ifdef CONFIG_HAS_VERSION3
  multiply = c->yarn_multiply;
#else
  if (is(c, "yarn_multiply")) return plan->attention_factor; /* its reading unknown: the plan's */
  multiply = 0;
#endif
#ifdef CONFIG_MISREADS
  multiply = 0;
#endif
  mscale = c->mscale != 0 && c->mscale_all_dim != 0
               ? yarn_mscale(c->factor, c->mscale) / yarn_mscale(c->factor, c->mscale_all_dim)
               : yarn_mscale(c->factor, 1.0);
  if (!c->attention_factor_given) return mscale;
  return multiply ? mscale * c->attention_factor : c->attention_factor;
}

/* Pair j's ladder: its axis's dim and its index there (axial), or the rotary dim and j. */
static void ladder_of(const pe_rope_plan* plan, size_t j, double* dim, double* index) {
  *dim = (double)plan->rotary_dim, *index = (double)j;
#if defined(CONFIG_HAS_VERSION3) && !defined(CONFIG_MISREADS)
  if (is(plan->config, "axial")) {
    size_t a, first = 0;
    for (a = 0; a < plan->config->n_axes_dim; ++a) {
      const size_t pairs = plan->config->axes_dim[a] / 2;
      if (j < first + pairs) {
        *dim = (double)plan->config->axes_dim[a], *index = (double)(j - first);
        return;
      }
      first += pairs;
    }
  }
#endif
}

/* The dynamic base' (HF's live n = max(seq_len, L); vLLM's n = factor·L; Hunyuan's alpha). */
static double dynamic_base(const pe_rope_config* c, double d) {
  const double L = (double)c->original_max_position_embeddings, s = c->factor;
  double n = (double)c->seq_len > L ? (double)c->seq_len : L;
#if defined(CONFIG_HAS_VERSION3) && !defined(CONFIG_MISREADS)
  if (is(c, "dynamic_alpha")) return c->rope_theta * pow(c->alpha, d / (d - 2));
  if (is(c, "dynamic_static") && c->dynamic_static) n = s * L;
#endif
  return c->rope_theta * pow(s * n / L - (s - 1), d / (d - 2));
}

/* Whether this build forms the rope type's frequencies itself. */
static int forms(const pe_rope_config* c) {
  if (is(c, "default") || is(c, "linear") || is(c, "dynamic")) return 1;
#ifdef CONFIG_HAS_VERSION3
  return is(c, "axial") || is(c, "dynamic_static") || is(c, "dynamic_alpha") || is(c, "proportional");
#else
  return 0;
#endif
}

/* Pair j's frequency from the config, or the plan's where it reads no config of a type it forms. */
static double frequency(const pe_rope_plan* plan, size_t j) {
  const pe_rope_config* c = plan->config;
  double dim, index;
  if (c == NULL || c->vision != NULL || !forms(c)) return plan->inv_freq[j]; /* vision: its own tables */
  ladder_of(plan, j, &dim, &index);
  if (is(c, "linear")) return pow(c->rope_theta, -2 * index / dim) / c->factor;
  if (is(c, "dynamic") || is(c, "dynamic_static") || is(c, "dynamic_alpha"))
    return pow(dynamic_base(c, dim), -2 * index / dim);
#ifdef CONFIG_HAS_VERSION3
  if (is(c, "proportional"))
    return index < floor(c->partial_rotary_factor * dim / 2)
               ? pow(c->rope_theta, -2 * index / dim) / c->factor
               : 0.0;
#endif
  return pow(c->rope_theta, -2 * index / dim); /* default, axial */
}

#endif /* PLUGTEST_CONFIG_FREQUENCIES_H_ */
