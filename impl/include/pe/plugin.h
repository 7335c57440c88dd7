/* pe-suite's C plugin ABI, version 3 (versions 1 and 2 frozen, still read): a kernel in any language that
 * can export a C function (C, C++, CUDA host code, Rust, Zig) registered as a pe-suite variant at run time:
 *
 *   pe-suite verify --plugin ./libmine.so          (also census, bench, run, export, list)
 *   PE_PLUGINS=/abs/libmine.so:/abs/libother.so    (the property and benchmark binaries; pe-suite
 *                                                   sets it for the ones it runs)
 *
 * A plugin is a shared library that exports one function, pe_plugin_register, which pe-suite calls
 * once after dlopen. It registers each kernel with pe_register_kernel(host, &kernel): a name, a
 * family, the contract (what the kernel supports and the error it promises, the fields of pe-suite's
 * pe::Contract, pe/contract.h) and a function taking the whole call in plain C arguments. The kernel
 * then gets everything a built-in variant gets: every property, the census, the benchmark grid, the
 * report.
 *
 *   #include <pe/plugin.h>
 *   static void my_rope(void* user, const pe_rope_plan* plan, const pe_rope_batch* batch,
 *                       int32_t direction, const pe_buffer* x) { ... }
 *   PE_PLUGIN_EXPORT int pe_plugin_register(const pe_host* host) {
 *     pe_kernel k = {sizeof(pe_kernel)};
 *     k.name = "rope.mine";
 *     k.family = PE_FAMILY_ROPE;
 *     k.contract.layouts = PE_BIT(PE_LAYOUT_HALFSPLIT);
 *     k.contract.outputs = PE_BIT(PE_DTYPE_F32);
 *     ...                                        (every field of pe_contract below)
 *     k.rope_apply = my_rope;
 *     return pe_register_kernel(host, &k);
 *   }
 *
 * Stability: version 1 is frozen. A later version only appends fields to the end of pe_host,
 * pe_kernel, pe_rope_plan, pe_rope_batch and pe_sinusoidal_plan, each of which starts with its own
 * struct_size, and a pe-suite that reads version N still reads every plugin built for versions <= N.
 * Version 2 appends pe_rope_plan.config: the model's RoPE config under HF's names (pe_rope_config), for a
 * kernel that forms its frequencies from the raw parameters, as engines do.
 * Version 3 appends to pe_rope_config the parameters of what version 2 could only name by a rope type of
 * its own: axes_dim (axial RoPE), alpha (Hunyuan's dynamic NTK), partial_rotary_factor (proportional), and
 * the readings dynamic_static and yarn_multiply as flags; the rope_type names stay what they were, so a
 * plugin rebuilt against this header computes what it computed before.
 * Every enumeration starts at 1, so that a field left zero reads as "not set" and is refused.
 *
 * pe-suite refuses a plugin (exit 2, naming its path and the reason) that exports no entry, was built
 * for another ABI version, registers no kernel, a null function, a malformed or taken name, or an
 * invalid contract. It checks the numbers a kernel returns, never trusts them: wrong numbers fail the
 * properties and the census, and crash nothing. A kernel that crashes crashes the process.
 *
 * Kernels must be thread-safe and reentrant, must not retain the pointers they are handed, and must
 * not allocate on a path the benchmarks time if their allocations are to read zero. */
#ifndef PE_PLUGIN_H_
#define PE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest version this header describes (what pe-suite reads), and the version a plugin registers
 * with: the newest, unless the plugin defines PE_PLUGIN_ABI_VERSION to an older one it was written for. */
#define PE_PLUGIN_ABI_LATEST 3
#ifndef PE_PLUGIN_ABI_VERSION
#define PE_PLUGIN_ABI_VERSION PE_PLUGIN_ABI_LATEST
#endif
#if PE_PLUGIN_ABI_VERSION < 1 || PE_PLUGIN_ABI_VERSION > PE_PLUGIN_ABI_LATEST
#error "PE_PLUGIN_ABI_VERSION: this pe/plugin.h describes versions 1 to PE_PLUGIN_ABI_LATEST"
#endif

#if defined(_WIN32)
#define PE_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define PE_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define PE_PLUGIN_EXPORT
#endif

/* A set of layouts or types: PE_BIT(PE_LAYOUT_HALFSPLIT) | PE_BIT(PE_LAYOUT_INTERLEAVED). */
#define PE_BIT(value) (1u << (value))

/* Families (pe_kernel.family). ALiBi kernels are C++ only in version 1. */
#define PE_FAMILY_SINUSOIDAL 1u
#define PE_FAMILY_ROPE 2u

/* Layouts (pe_contract.layouts as PE_BITs; the plans' layout). pe/types.h has the full definitions.
 *   INTERLEAVED   sinusoidal: PE(p, 2i) = sin, PE(p, 2i+1) = cos. RoPE: pairs (2j, 2j+1) (GPT-J, ggml
 *                 NORMAL). DeepSeek's de-interleaved form is this rotation with its output reordered
 *                 half-split: pe-suite reorders around the call, the kernel never sees it.
 *   CONCATENATED  sinusoidal only: [sin ... | cos ...] (tensor2tensor, fairseq).
 *   HALFSPLIT     RoPE only: pairs (j, j + rotary_dim/2) (GPT-NeoX, HF rotate_half, ggml NEOX). */
#define PE_LAYOUT_INTERLEAVED 1u
#define PE_LAYOUT_CONCATENATED 2u
#define PE_LAYOUT_HALFSPLIT 3u

/* Element types (pe_contract.outputs as PE_BITs; pe_buffer.dtype; the contract's type fields).
 * BF16 and F16 are their 16-bit patterns (uint16_t), rounded to nearest-even from the compute type. */
#define PE_DTYPE_F32 1u
#define PE_DTYPE_F64 2u
#define PE_DTYPE_BF16 3u
#define PE_DTYPE_F16 4u

/* RoPE's direction, the sign of the angle: forward rotates by +p·θ, inverse by -p·θ. */
#define PE_DIRECTION_FORWARD 1
#define PE_DIRECTION_INVERSE (-1)

/* A caller-owned buffer of `size` elements of type `dtype`. Only the types the kernel's contract
 * declares reach it. */
typedef struct pe_buffer {
  void* data;
  size_t size;    /* elements, not bytes */
  uint32_t dtype; /* PE_DTYPE_* */
} pe_buffer;

/* A validated RoPE plan: everything that does not depend on the positions. Pair j (< n_pairs) rotates
 * channels (rotary_offset + 2j, rotary_offset + 2j + 1) when layout is INTERLEAVED, (rotary_offset + j,
 * rotary_offset + j + n_pairs) when HALFSPLIT, by the angle p·inv_freq[j] with p the token's position
 * on axis axis_of_pair[j]; cos and sin are then multiplied by attention_factor. Channels outside
 * [rotary_offset, rotary_offset + rotary_dim) are left untouched. */
struct pe_rope_config; /* below: version 2 */

typedef struct pe_rope_plan {
  uint32_t struct_size;         /* sizeof(pe_rope_plan) in pe-suite: later versions append fields */
  uint32_t layout;              /* PE_LAYOUT_INTERLEAVED or PE_LAYOUT_HALFSPLIT */
  size_t head_dim;              /* channels of a row (a token's head) */
  size_t rotary_dim;            /* rotated channels, even, <= head_dim - rotary_offset */
  size_t rotary_offset;         /* first rotated channel (DeepSeek MLA's q_pe: 128 of 192) */
  size_t n_pairs;               /* rotary_dim / 2 */
  size_t n_axes;                /* position axes: 1 text, 3 or 4 M-RoPE, 2 vision, n axial */
  const double* inv_freq;       /* [n_pairs] θ'_j, the scaled frequency, relative error <= 1.02·2^-53 */
  const uint32_t* axis_of_pair; /* [n_pairs] the axis pair j reads (< n_axes; all 0 for text) */
  /* The pieces, for a kernel that forms the frequency its own way, as engines do:
   *   θ'_j = gain[j] · base^(-2·frequency_index[j] / frequency_dim)
   * (text RoPE: frequency_index[j] = j, frequency_dim = rotary_dim; vision forms index their own
   * tables; axial forms, each axis its own ladder over its own dim d_a, give the least common multiple D
   * of their dims as frequency_dim and index·D/d_a, the same ratio (0 where D would pass 2^24: read
   * inv_freq then; a recurrence restarts at each axis); base is the NTK/dynamic base' under those
   * scalings, gain[j] the scaling's per-pair factor, 1 without one). Each rounded once to double. */
  const uint32_t* frequency_index; /* [n_pairs] */
  size_t frequency_dim;
  double base;
  const double* gain;      /* [n_pairs] */
  double attention_factor; /* on cos and sin: YaRN's and LongRoPE's mscale; 1 otherwise */
  /* Version 2: the model's RoPE as its config.json states it, so that a kernel forms its frequencies
   * from the raw parameters the way engines do (pe-suite checks the result against the exact reference;
   * inv_freq above is the same frequencies, formed by pe-suite). NULL for a kernel registered with
   * version 1. */
  const struct pe_rope_config* config;
} pe_rope_plan;

/* Version 2: a RoPE's config under Hugging Face's names (config.json's rope_theta, rope_scaling's
 * rope_type and its parameters). A number the method does not read is 0 (or NULL with its count 0). */
typedef struct pe_rope_config {
  uint32_t struct_size;  /* sizeof(pe_rope_config) in pe-suite: later versions append fields */
  const char* rope_type; /* "default", "linear", "dynamic", "yarn", "longrope", "llama3",
                            "proportional"; or pe-suite's own hypotheses no config states, "ntk"
                            (NTK-aware) and "custom" (positions divided by a scale); or the engines'
                            other readings and forms: "axial" (axes_dim), "dynamic_static" (vLLM's one
                            table at factor·L), "dynamic_alpha" (Hunyuan), "yarn_multiply" (vLLM's
                            attention factor times the mscale), whose parameters version 3 adds at the
                            end. A kernel that does not know the method uses the plan's inv_freq */
  double rope_theta;     /* the base as configured (dynamic's grown base is the plan's base) */
  double factor;         /* linear, dynamic, yarn, llama3 */
  int64_t original_max_position_embeddings; /* llama3, yarn, longrope; dynamic's max_position_embeddings */
  double low_freq_factor, high_freq_factor; /* llama3 */
  double beta_fast, beta_slow;              /* yarn (32 and 1 unless configured) */
  int32_t truncate;                         /* yarn: 1 to floor/ceil the correction range (HF's default) */
  int32_t attention_factor_given;           /* 1: attention_factor below is the config's own */
  double attention_factor;                  /* given: the factor on cos and sin */
  double mscale, mscale_all_dim;            /* yarn (DeepSeek's): 0 when absent */
  const double* short_factor;               /* longrope: [n_factors] each */
  const double* long_factor;
  size_t n_factors;
  /* HF's seq_len as pe-suite formed the plan: its stand-in for max(position_ids) + 1, set by the caller of
   * the plan, not derived from this batch's positions (0 is HF's None: dynamic keeps its base, longrope
   * takes short_factor). dynamic and longrope read it; 0 for the others. */
  int64_t seq_len;
  const uint32_t* mrope_section; /* M-RoPE: pairs per axis, [n_sections]; NULL for text */
  size_t n_sections;
  int32_t mrope_interleaved; /* M-RoPE: 1 for Qwen3-VL's interleaved placement (HF's mrope_interleaved) */
  const char* vision;        /* a 2-D vision form ("qwen2vl", "pixtral"), NULL otherwise: its pairs
                                frequencies follow frequency_index/frequency_dim above, not 2j/rotary_dim */
  /* Version 3 (read them only where struct_size covers them, from a kernel registered with version 3). */
  const uint32_t* axes_dim; /* axial RoPE (diffusers' axes_dim): channels per axis, [n_axes_dim], each axis
                               its own ladder base^(-2k/axes_dim[a]) over its own pairs; NULL otherwise */
  size_t n_axes_dim;
  int32_t dynamic_static; /* 1 with "dynamic_static": vLLM's and SGLang's one table at n = factor·L
                             (seq_len unread); 0 otherwise (HF's live n = max(seq_len, L)) */
  double alpha;           /* "dynamic_alpha": Hunyuan's alpha, base·alpha^(d/(d-2)) at any length; else 0 */
  int32_t yarn_multiply;  /* 1 with "yarn_multiply": the given attention_factor times YaRN's mscale (vLLM,
                             SGLang); 0 otherwise (HF replaces the mscale by it) */
  double partial_rotary_factor; /* proportional: F, the first int(F·rotary_dim // 2) pairs turn, the rest
                                   at frequency 0; 0 for the other methods */
} pe_rope_config;

/* The rows to rotate, in place: row (t, h), t < tokens, h < heads, starts at element
 * t·token_stride + h·head_stride of the buffer and holds head_dim contiguous channels. pe-suite has
 * checked that every row lies inside the buffer and that no two overlap. */
typedef struct pe_rope_batch {
  uint32_t struct_size;     /* sizeof(pe_rope_batch) in pe-suite */
  const int64_t* positions; /* [n_axes][tokens]: axis a of token t is positions[a·tokens + t], in
                               [0, 2^53], unsorted; the budget covers those <= max_position */
  size_t n_axes;            /* the plan's n_axes */
  size_t tokens, heads;
  size_t token_stride, head_stride; /* in elements */
} pe_rope_batch;

/* RoPE: rotate every row of the batch in `x` by its position (direction PE_DIRECTION_INVERSE: by
 * its negative), rounding once into x->dtype. */
typedef void (*pe_rope_apply_fn)(void* user_data, const pe_rope_plan* plan, const pe_rope_batch* batch,
                                 int32_t direction, const pe_buffer* x);

/* A validated sinusoidal plan: pair i (< n_pairs) of a row is (sin, cos) of p·inv_freq[i],
 * inv_freq[i] = base^(-2i/dim), at channels (2i, 2i+1) INTERLEAVED or (i, n_pairs + i) CONCATENATED. */
typedef struct pe_sinusoidal_plan {
  uint32_t struct_size; /* sizeof(pe_sinusoidal_plan) in pe-suite */
  uint32_t layout;      /* PE_LAYOUT_INTERLEAVED or PE_LAYOUT_CONCATENATED */
  size_t dim;           /* channels of a row, even */
  size_t n_pairs;       /* dim / 2 */
  double base;
  const double* inv_freq; /* [n_pairs], relative error <= 1.02·2^-53 */
} pe_sinusoidal_plan;

/* Sinusoidal: out[r, :] = PE(positions[r]) for r < n_positions (out holds n_positions·dim). */
typedef void (*pe_sinusoidal_table_fn)(void* user_data, const pe_sinusoidal_plan* plan,
                                       const int64_t* positions, size_t n_positions, const pe_buffer* out);
/* Sinusoidal, fused: embeddings[r, :] += PE(positions[r]) for every row whose padding[r] is 0; padding
 * is NULL when no row is padding. One rounding in the compute type, one into the buffer's type. */
typedef void (*pe_sinusoidal_add_fn)(void* user_data, const pe_sinusoidal_plan* plan,
                                     const int64_t* positions, size_t n_positions, const uint8_t* padding,
                                     const pe_buffer* embeddings);

/* A kernel's accuracy contract (pe/contract.h has the formula and docs/contracts.md derivations):
 *   |y - exact| <= (c0·u_out + ck·u_compute + ct·u_table + (c1 + c1_pair·j)·u_angle·|φ|) · scale + floor
 * with u the unit roundoff of each type, φ the exact angle, j the pair, scale 1 for tables and
 * |x_a| + |x_b| for a RoPE pair. Every coefficient must be finite and >= 0. */
typedef struct pe_contract {
  uint32_t layouts;       /* PE_BITs of PE_LAYOUT_*, at least one, of the kernel's family */
  uint32_t outputs;       /* PE_BITs of PE_DTYPE_*, at least one */
  uint32_t angle_type;    /* PE_DTYPE_* the angle p·θ is formed in */
  uint32_t compute_type;  /* PE_DTYPE_* of sin/cos and of the rotation or addition */
  uint32_t table_type;    /* PE_DTYPE_* of a stored cos/sin table (with ct); 0: none (F64) */
  int64_t max_position;   /* largest position the budget covers, in (0, 2^53] */
  double max_base;        /* largest base the derivation covers, > 1 */
  double max_input_abs;   /* RoPE and the fused add: largest |input| promised, > 0 */
  int64_t state_rows;     /* 0 when each row depends on its position alone; else rows advanced from
                             the last directly computed one (pe/contract.h) */
  double c0;              /* the final rounding into the output type (absent when out = compute) */
  double ck;              /* sin/cos and the rotation, in units of the compute type */
  double ct;              /* a stored table's rounding, in units of table_type */
  double c1;              /* the angle's error per unit of |φ|, in units of angle_type */
  double c1_pair;         /* growth of c1 with the pair index (frequencies by repeated products) */
  double ca;              /* the attention factor's roundings when it is not 1: 3 for one product in
                             the compute type (pe-suite's default in C++ contracts) */
  double c1_gain;         /* a scaling's gain applied in the angle type: 2 for one product */
  const char* depends_on; /* build conditions the bound relies on ("glibc sinf <= 1 ULP"); may be NULL */
} pe_contract;

/* One kernel. pe-suite copies what it needs during pe_register_kernel: the struct may live on the
 * stack. The functions and user_data must stay valid while the library is loaded (pe-suite never
 * unloads a plugin). */
typedef struct pe_kernel {
  uint32_t struct_size; /* sizeof(pe_kernel): later versions append fields */
  uint32_t family;      /* PE_FAMILY_* */
  const char* name;     /* "<family>.<backend>[@TARGET]": backend lower-case letters, digits, '_'
                           ("rope.engine_c"); unique among all variants, built-in ones included */
  pe_contract contract;
  void* user_data;             /* passed unchanged to the functions (one function, several kernels) */
  pe_rope_apply_fn rope_apply; /* PE_FAMILY_ROPE: required */
  pe_sinusoidal_table_fn sinusoidal_table; /* PE_FAMILY_SINUSOIDAL: required */
  pe_sinusoidal_add_fn sinusoidal_add;     /* PE_FAMILY_SINUSOIDAL: required */
} pe_kernel;

/* What pe-suite hands the entry function. */
typedef struct pe_host {
  uint32_t struct_size; /* sizeof(pe_host) in pe-suite: later versions append fields */
  uint32_t abi_version; /* the newest ABI this pe-suite reads (it reads every older one too) */
  void* context;        /* pass back unchanged */
  /* Registers one kernel, `abi_version` being the plugin's PE_PLUGIN_ABI_VERSION (use
   * pe_register_kernel). Returns 0, or nonzero when refused: pe-suite keeps the reason and refuses the
   * plugin. */
  int (*register_kernel)(void* context, uint32_t abi_version, const pe_kernel* kernel);
  /* Says why the plugin refuses to register (then return nonzero from the entry). */
  void (*report_error)(void* context, const char* message);
} pe_host;

static inline int pe_register_kernel(const pe_host* host, const pe_kernel* kernel) {
  return host->register_kernel(host->context, PE_PLUGIN_ABI_VERSION, kernel);
}

/* The entry every plugin exports: register the kernels and return 0, or return nonzero to refuse
 * (after report_error). Called once, from the thread that loads the plugin. */
#define PE_PLUGIN_ENTRY_NAME "pe_plugin_register"
typedef int (*pe_plugin_register_fn)(const pe_host* host);
PE_PLUGIN_EXPORT int pe_plugin_register(const pe_host* host);

#ifdef __cplusplus
}
#endif

#endif /* PE_PLUGIN_H_ */
