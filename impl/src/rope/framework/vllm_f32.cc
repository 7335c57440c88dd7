// rope.vllm_f32: vLLM's and SGLang's RotaryEmbedding in float32 (_compute_inv_freq: 1.0 / base **
// (arange(0, rotary_dim, 2, float) / rotary_dim), the cos/sin cache of freqs = einsum(t, inv_freq), the
// rotation in float32), whose LinearScalingRotaryEmbedding divides the positions by the factor,
// t = arange(max_len, float) / scaling_factor, where HF divides inv_freq (rope.torch_f32): the same exact
// angle, rounded otherwise. Every other method reads the plan's base' and gain as HF's rule does (dynamic's
// static table is the plan's dynamic_semantics, not a formulation).
//
// Contract: rope.torch_f32's (cache_contract.h). The linear path rounds fl(s) and the quotient
// fl(fl(p)/fl(s)) where HF rounds fl(g_j) and its product: two roundings of the angle either way (c1_gain
// = 2.001).
#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"
#include "rope/framework/cache_contract.h"

namespace pe {
namespace {

struct VllmRopeSinCos {
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    const RopeScaling& scaling = plan.params().scaling;
    if (scaling.type != RopeScalingType::Linear || scaling.position_scale != 1.0 ||
        scaling.attention_factor) {
      detail::HfRopeSinCos{plan}(p, j, s, c);
      return;
    }
    const FrequencyIndex f = plan.frequency_index(j);
    const float exponent = static_cast<float>(2 * f.index) / static_cast<float>(f.dim);
    const float inv_freq = 1.0f / std::pow(static_cast<float>(detail::formula_base(plan)), exponent);
    const float t = static_cast<float>(p) / static_cast<float>(scaling.factor);
    const float angle = t * inv_freq;
    s = std::sin(angle);
    c = std::cos(angle);
  }
};

const Contract kContract = detail::hf_rope_contract("glibc powf, sinf, cosf <= 1 ULP");

PE_REGISTER_ROPE("rope.vllm_f32", kContract, detail::PairwiseRope<float, VllmRopeSinCos>);

}  // namespace
}  // namespace pe
