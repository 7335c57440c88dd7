// sinusoidal.torch_f32: the PyTorch tutorial's PositionalEncoding, as written:
//   div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
//   pe[:, 0::2] = torch.sin(position * div_term); pe[:, 1::2] = torch.cos(position * div_term)
// all in float32 (the int64 aranges promote to float32 with the Python scalar). A real position t is the
// float32 tensor's fl(t); a plan's scale multiplies the angle as a Python float times a float32 tensor,
// fl(fl(scale)·angle).
//
// Contract (derived), base <= 1e7:
//   frequency: fl(-ln b / d) and fl(2i·that) carry 2.0001·2^-24 of |x| <= ln b; expf (<= 1 ULP,
//   2·2^-24 relative): ω carries (2·ln b + 2)·2^-24 <= 34.25·2^-24;
//   angle: fl(t) and the product add 2·2^-24: c1 = 36.3; fl(scale) and its product (scaled or real):
//   c1_scale = 2; |φ| = |scale·t·ω|;
//   kernel: sinf/cosf 1 ULP <= 2^-24; float32 is the compute type, bfloat16/float16 round once.
//   Budget: c0·u_out + (1 + 36.3·|φ|)·2^-24, + 2·2^-24·|φ| scaled or real. Largest |scale·t|: 2^24; t and
//   scale normal float32 magnitudes (pe/api.h).
#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract = detail::framework_table_contract("glibc expf, sinf, cosf <= 1 ULP", 36.3, 0, 2);

PE_REGISTER_SINUSOIDAL("sinusoidal.torch_f32", kContract,
                       detail::PairwiseSinusoidal<float, detail::TorchTutorialSinCos>);

}  // namespace
}  // namespace pe
