#include "plugin_variants.h"

#include <algorithm>
#include <iterator>
#include <new>
#include <numeric>
#include <string_view>
#include <vector>

#include "pe/detail/convert.h"
#include "pe/detail/rope_driver.h"
#include "pe/rope_form.h"
#include "pe/rope_scaling.h"

namespace pe::harness::detail {
namespace {

// Each pair's axis and frequency index, which the plan computes on demand but the ABI hands over as
// arrays: on the stack up to this many pairs (8 KiB; a 1024-channel head is 512 pairs), beyond it in a
// per-thread buffer that grows once, so that a timed call allocates nothing after the first.
constexpr std::size_t kStackPairs = 1024;

std::uint32_t* per_pair_scratch(std::size_t values) noexcept {
  thread_local std::vector<std::uint32_t> scratch;
  try {
    if (scratch.size() < values) scratch.resize(values);
  } catch (...) {
    return nullptr;
  }
  return scratch.data();
}

// HF's rope_type for a scaling method; "ntk" (pe-suite's: no HF rope_type, the plan's base is its base').
const char* hf_rope_type(RopeScalingType t) noexcept {
  return t == RopeScalingType::None ? "default" : to_string(t).data();  // the table's words are literals
}

// The uint32 lists a config points to (M-RoPE's sections, axial's axes_dim), held by the caller's frame.
struct ConfigLists {
  std::uint32_t sections[8] = {}, axes[8] = {};
  std::size_t n_sections = 0, n_axes = 0;
  explicit ConfigLists(const RopeForm& form) {
    n_sections = std::min<std::size_t>(form.mrope_section.size(), std::size(sections));
    for (std::size_t k = 0; k < n_sections; ++k)
      sections[k] = static_cast<std::uint32_t>(form.mrope_section[k]);
    n_axes = std::min<std::size_t>(form.axes_dim.size(), std::size(axes));
    for (std::size_t k = 0; k < n_axes; ++k) axes[k] = static_cast<std::uint32_t>(form.axes_dim[k]);
  }
};

// Version 3's fields: the engines' readings of HF's types and the axial form, typed.
void add_version3(const RopePlan& plan, const ConfigLists& lists, pe_rope_config& c) noexcept {
  const RopeScaling& s = plan.params().scaling;
  c.axes_dim = lists.n_axes > 0 ? lists.axes : nullptr;
  c.n_axes_dim = lists.n_axes;
  const bool dynamic = s.type == RopeScalingType::Dynamic;
  c.dynamic_static = dynamic && !s.alpha && s.dynamic_semantics == DynamicSemantics::Static ? 1 : 0;
  c.alpha = dynamic && s.alpha ? *s.alpha : 0;
  c.yarn_multiply =
      s.type == RopeScalingType::Yarn && s.attention_factor && s.yarn_attention == YarnAttention::Multiply
          ? 1
          : 0;
  c.partial_rotary_factor = s.type == RopeScalingType::Proportional ? s.partial_rotary_factor : 0;
}

// The plan's scaling under HF's names (pe_rope_config), each number only where the method reads it. The
// rope_type names are the same in every version (a plugin rebuilt against a newer header means what it
// meant); version 3 adds the fields those names stand for.
pe_rope_config c_config(const RopePlan& plan, const ConfigLists& lists, std::uint32_t abi_version) noexcept {
  const std::uint32_t* sections = lists.sections;
  const std::size_t n_sections = lists.n_sections;
  const RopeParams& params = plan.params();
  const RopeScaling& s = params.scaling;
  const auto reads = [&](std::string_view field) { return reads_field(s.type, field); };
  pe_rope_config c{};
  c.struct_size = sizeof(pe_rope_config);
  // Positions divided by a scale is a hypothesis of pe-suite's (no config states it): "custom", inv_freq's.
  // The engines' other readings of one rope_type (vLLM's static dynamic table, Hunyuan's alpha, vLLM's YaRN
  // attention factor times its mscale) and the axial form have no field in ABI v2: rope types of their own,
  // which a kernel that does not know them meets with the plan's inv_freq.
  c.rope_type =
      s.position_scale != 1.0                         ? "custom"
      : !params.form.axes_dim.empty()                 ? "axial"
      : s.type == RopeScalingType::Dynamic && s.alpha ? "dynamic_alpha"
      : s.type == RopeScalingType::Dynamic && s.dynamic_semantics == DynamicSemantics::Static
          ? "dynamic_static"
      : s.type == RopeScalingType::Yarn && s.yarn_attention == YarnAttention::Multiply && s.attention_factor
          ? "yarn_multiply"
          : hf_rope_type(s.type);
  c.rope_theta = params.base;
  c.factor = reads("factor") ? s.factor : 0;
  c.original_max_position_embeddings = reads("original_max_position") ? s.original_max_position : 0;
  if (s.type == RopeScalingType::Llama3)
    c.low_freq_factor = s.low_freq_factor, c.high_freq_factor = s.high_freq_factor;
  if (s.type == RopeScalingType::Yarn) {
    c.beta_fast = s.beta_fast, c.beta_slow = s.beta_slow, c.truncate = s.truncate ? 1 : 0;
    c.mscale = s.mscale.value_or(0), c.mscale_all_dim = s.mscale_all_dim.value_or(0);
  }
  c.attention_factor_given = s.attention_factor.has_value() ? 1 : 0;
  c.attention_factor = s.attention_factor.value_or(0);
  if (s.type == RopeScalingType::LongRope) {
    c.short_factor = s.short_factor.data(), c.long_factor = s.long_factor.data();
    c.n_factors = s.short_factor.size();
  }
  c.seq_len = reads("seq_len") ? s.seq_len : 0;
  c.mrope_section = n_sections > 0 ? sections : nullptr;
  c.n_sections = n_sections;
  const RopeForm& form = params.form;
  c.mrope_interleaved = n_sections > 0 && form.mrope_layout == MropeLayout::Interleaved ? 1 : 0;
  c.vision = form.vision == VisionRope::None ? nullptr : to_string(form.vision).data();
  if (abi_version >= 3) add_version3(plan, lists, c);
  return c;
}

// The ABI's one frequency_dim for every pair: an axial plan's axes each have their own dim d_a, so the plugin
// gets their least common multiple D with index_j·D/d_a, the same exponent 2·index_j/d_a as a ratio (a float
// division of the two gives the same rounded value); the other forms have one dim, unchanged. The plan's
// dims are even; D is kept to 2^24, where float32 still holds it and every index·D/d_a exactly (no model's
// dims come near): past that D is 0 and a plugin must read inv_freq, which the ABI always carries. A kernel
// stepping a recurrence (ggml's theta *= base^(-2/D)) restarts it at each axis (axis_of_pair).
std::uint64_t common_frequency_dim(const RopePlan& plan) noexcept {
  std::uint64_t common = 0;
  for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
    const std::uint64_t d = plan.frequency_index(j).dim;
    common = common == 0 ? d : common / std::gcd(common, d) * d;
    if (common > (std::uint64_t{1} << 24)) return 0;
  }
  return common;
}

class PluginRope final : public RopeVariant {
 public:
  PluginRope(std::string name, Contract contract, pe_rope_apply_fn apply_fn, void* user_data,
             std::uint32_t abi_version)
      : RopeVariant(std::move(name), std::move(contract)),
        apply_(apply_fn),
        user_data_(user_data),
        abi_version_(abi_version) {}

  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    const std::size_t n = plan.n_pairs();
    std::uint32_t stack[2 * kStackPairs];
    std::uint32_t* per_pair = n <= kStackPairs ? stack : per_pair_scratch(2 * n);
    if (per_pair == nullptr) return;  // out of memory: x untouched, and the checks say so
    const std::uint64_t common = common_frequency_dim(plan);
    for (std::size_t j = 0; j < n; ++j) {
      const FrequencyIndex f = plan.frequency_index(j);
      per_pair[j] = static_cast<std::uint32_t>(plan.axis_of_pair(j));
      per_pair[n + j] = static_cast<std::uint32_t>(f.index * (common / f.dim));
    }
    // The de-interleaved form is the interleaved rotation with its output reordered: pe-suite does the
    // reordering, as its driver does for the built-in variants, so a plugin implements two pairings.
    const bool deinterleave = plan.layout() == Layout::Deinterleave;
    pe_rope_plan p{
        .struct_size = sizeof(pe_rope_plan),
        .layout = deinterleave ? PE_LAYOUT_INTERLEAVED : to_c(plan.layout()),
        .head_dim = plan.head_dim(),
        .rotary_dim = plan.rotary_dim(),
        .rotary_offset = plan.rotary_offset(),
        .n_pairs = n,
        .n_axes = plan.n_axes(),
        .inv_freq = plan.inv_freq().data(),
        .axis_of_pair = per_pair,
        .frequency_index = per_pair + n,
        .frequency_dim = static_cast<std::size_t>(common),
        .base = plan.effective_base(),
        .gain = plan.gain().data(),
        .attention_factor = plan.attention_factor(),
        .config = nullptr,
    };
    // Version 2: the raw config (M-RoPE's sections as the form states them: 3 or 4, the plan checked);
    // version 3 its typed readings too.
    const ConfigLists lists(plan.params().form);
    pe_rope_config config{};
    if (abi_version_ >= 2) {
      config = c_config(plan, lists, abi_version_);
      p.config = &config;
    }
    const pe_rope_batch b{
        .struct_size = sizeof(pe_rope_batch),
        .positions = batch.positions.data(),
        .n_axes = batch.n_axes,
        .tokens = batch.tokens(),
        .heads = batch.heads,
        .token_stride = batch.token_stride,
        .head_stride = batch.head_stride,
    };
    const pe_buffer buffer{x.data, x.size, to_c(x.dtype)};
    const auto reorder = [&] {
      pe::detail::with_typed(
          x, [&](auto* data) { pe::detail::reorder_deinterleave(plan, batch, data, direction); });
    };
    if (deinterleave && direction == RopeDirection::Inverse) reorder();
    apply_(user_data_, &p, &b,
           direction == RopeDirection::Forward ? PE_DIRECTION_FORWARD : PE_DIRECTION_INVERSE, &buffer);
    if (deinterleave && direction == RopeDirection::Forward) reorder();
  }

 private:
  pe_rope_apply_fn apply_;
  void* user_data_;
  std::uint32_t abi_version_;
};

class PluginSinusoidal final : public SinusoidalVariant {
 public:
  PluginSinusoidal(std::string name, Contract contract, pe_sinusoidal_table_fn table_fn,
                   pe_sinusoidal_add_fn add_fn, void* user_data)
      : SinusoidalVariant(std::move(name), std::move(contract)),
        table_(table_fn),
        add_(add_fn),
        user_data_(user_data) {}

  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    const pe_sinusoidal_plan p = c_plan(plan);
    const pe_buffer buffer{out.data, out.size, to_c(out.dtype)};
    table_(user_data_, &p, positions.data(), positions.size(), &buffer);
  }

  // ABI v2 has no real positions: the contract (table_switches false) has the API refuse them before any
  // call reaches here. Never reached; writes nothing.
  void table_at(const SinusoidalPlan&, std::span<const double>, Buffer) const noexcept override {}

  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer embeddings) const noexcept override {
    const pe_sinusoidal_plan p = c_plan(plan);
    const pe_buffer buffer{embeddings.data, embeddings.size, to_c(embeddings.dtype)};
    add_(user_data_, &p, positions.data(), positions.size(), padding.empty() ? nullptr : padding.data(),
         &buffer);
  }

 private:
  static pe_sinusoidal_plan c_plan(const SinusoidalPlan& plan) noexcept {
    return {sizeof(pe_sinusoidal_plan), to_c(plan.layout()),   plan.dim(), plan.n_pairs(),
            plan.params().base,         plan.inv_freq().data()};
  }

  pe_sinusoidal_table_fn table_;
  pe_sinusoidal_add_fn add_;
  void* user_data_;
};

const char* rope_missing(const pe_kernel& k) noexcept {
  return k.rope_apply == nullptr ? "rope_apply" : nullptr;
}

const char* sinusoidal_missing(const pe_kernel& k) noexcept {
  return k.sinusoidal_table == nullptr ? "sinusoidal_table"
         : k.sinusoidal_add == nullptr ? "sinusoidal_add"
                                       : nullptr;
}

std::unique_ptr<Variant> rope_variant(std::string name, Contract contract, const pe_kernel& k,
                                      std::uint32_t abi_version) {
  return std::make_unique<PluginRope>(std::move(name), std::move(contract), k.rope_apply, k.user_data,
                                      abi_version);
}

std::unique_ptr<Variant> sinusoidal_variant(std::string name, Contract contract, const pe_kernel& k,
                                            std::uint32_t) {
  return std::make_unique<PluginSinusoidal>(std::move(name), std::move(contract), k.sinusoidal_table,
                                            k.sinusoidal_add, k.user_data);
}

constexpr PluginFamily kPluginFamilies[] = {
    {PE_FAMILY_SINUSOIDAL, "PE_FAMILY_SINUSOIDAL", Family::Sinusoidal, sinusoidal_missing,
     sinusoidal_variant},
    {PE_FAMILY_ROPE, "PE_FAMILY_ROPE", Family::Rope, rope_missing, rope_variant},
};

}  // namespace

std::span<const PluginFamily> plugin_families() noexcept { return kPluginFamilies; }

const PluginFamily* plugin_family(std::uint32_t c_family) noexcept {
  for (const PluginFamily& f : kPluginFamilies)
    if (f.c_family == c_family) return &f;
  return nullptr;
}

namespace {

constexpr std::pair<std::uint32_t, Layout> kLayouts[] = {{PE_LAYOUT_INTERLEAVED, Layout::Interleaved},
                                                         {PE_LAYOUT_CONCATENATED, Layout::Concatenated},
                                                         {PE_LAYOUT_HALFSPLIT, Layout::HalfSplit}};
constexpr std::pair<std::uint32_t, DType> kDTypes[] = {{PE_DTYPE_F32, DType::F32},
                                                       {PE_DTYPE_F64, DType::F64},
                                                       {PE_DTYPE_BF16, DType::BF16},
                                                       {PE_DTYPE_F16, DType::F16}};

template <class E, std::size_t N>
std::optional<E> from_c(const std::pair<std::uint32_t, E> (&table)[N], std::uint32_t c) noexcept {
  for (const auto& [code, e] : table)
    if (code == c) return e;
  return std::nullopt;
}

// 0 for a value the ABI has no code for (Layout::Hqk).
template <class E, std::size_t N>
std::uint32_t c_of(const std::pair<std::uint32_t, E> (&table)[N], E e) noexcept {
  for (const auto& [code, v] : table)
    if (v == e) return code;
  return 0;
}

}  // namespace

std::optional<Layout> layout_of(std::uint32_t layout) noexcept { return from_c(kLayouts, layout); }
std::optional<DType> dtype_of(std::uint32_t dtype) noexcept { return from_c(kDTypes, dtype); }
std::uint32_t to_c(Layout layout) noexcept {
  return c_of(kLayouts, layout == Layout::Deinterleave ? Layout::Interleaved : layout);
}
std::uint32_t to_c(DType dtype) noexcept { return c_of(kDTypes, dtype); }

}  // namespace pe::harness::detail
