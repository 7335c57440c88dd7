// A float32 RoPE kernel written the way engines write it (Hugging Face's LlamaRotaryEmbedding,
// vLLM's and FlashInfer's CPU paths): inv_freq = 1 / powf(base, 2j/d), the angle p·inv_freq in float,
// sinf and cosf, the rotation in float. Registered as the variant rope.engine_f32 with its contract.
#include <pe/kernel.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace {

struct EngineSinCos {
  const pe::RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    const float exponent = static_cast<float>(2 * pe::kernel::frequency_of(plan, j)) /
                           static_cast<float>(pe::kernel::frequency_dim(plan, j));
    float inv_freq = 1.0f / std::pow(static_cast<float>(pe::kernel::formula_base(plan)), exponent);
    inv_freq *= pe::kernel::formula_gain(plan, j);  // the scaling's per-pair gain (1 without one)
    float angle = inv_freq * static_cast<float>(p);
#ifdef ENGINE_ROPE_FLIP_SIGN
    angle = -angle;  // the deliberate mistake
#endif
    s = std::sin(angle);
    c = std::cos(angle);
  }
};

// The error model of this formulation (pe-suite's docs/contracts.md derives the same for
// rope.torch_f32): inv_freq within (ln b + 4)·2^-24, the float angle's product and position
// c1 = ln(1e7) + 6 = 22.2 per unit of |angle|; sinf/cosf 1 ULP and the rotation: ck = 3.001; the
// scaling's gain one more float multiplication and rounding: c1_gain = 2.001.
const pe::Contract kContract{
    .layouts = {pe::Layout::Interleaved, pe::Layout::HalfSplit},
    .outputs = {pe::DType::F32},
    .angle_type = pe::DType::F32,
    .compute_type = pe::DType::F32,
    .max_position = std::int64_t{1} << 24,
    .max_base = 1e7,
    .max_input_abs = 0x1p126,
    .depends_on = "glibc powf, sinf, cosf <= 1 ULP",
    .c0 = 1,
    .ck = 3.001,
    .c1 = 22.2,
    .c1_gain = 2.001,
};

PE_REGISTER_ROPE("rope.engine_f32", kContract, pe::kernel::PairwiseRope<float, EngineSinCos>);

}  // namespace
