// State across calls (issue 51): an engine serves a prompt that ends at the original context, decode steps
// past it, then a new, shorter sequence, every call through one kernel whose plans the process keeps
// (RopePlan's cache: the state the calls share). Under dynamic NTK and LongRoPE each call's frequencies are
// its own length's (HF's seq_len = max(position_ids) + 1): each call agrees with the exact reference under
// its own length, and the first call made again after the others gives its first bits.

#include <algorithm>
#include <bit>

#include "support/model_configs.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

class CallSequenceProps : public InstanceTest {};

TEST_P(CallSequenceProps, EachCallAgreesUnderItsOwnLengthAcrossTheOriginalContext) {
  PE_RC_CHECK(
      "a prefill to L, steps past it, a new sequence: each call within the contract at its own length", [&] {
        const ModelRope m = *gen_model_rope(in().layout, 256, max_position(), 4).as("model RoPE");
        RC_PRE(m.rope_type == "dynamic" || m.rope_type == "longrope");
        RC_PRE(m.params.form.mrope_section.empty());  // one axis: the calls' positions are text positions
        const std::int64_t L = m.params.scaling.original_max_position;
        RC_PRE(L >= 2 && L + 2 <= max_position());
        // The prefill's length is L (not past it), each step's past it, the new sequence's below it.
        const std::vector<std::vector<std::int64_t>> calls = {
            {L - 2, L - 1}, {L}, {L + 1}, {L - 2}, {L - 2, L - 1}};
        const auto heads = *rc::gen::inRange<std::int64_t>(1, 3).as("heads");
        std::vector<double> first_x, first_y;
        for (std::size_t c = 0; c < calls.size(); ++c) {
          const std::vector<std::int64_t>& positions = calls[c];
          RopeParams params = m.params;
          params.scaling.seq_len = *std::max_element(positions.begin(), positions.end()) + 1;
          const RopePlan plan(params);
          // The contract's derivation covers bases up to max_base: dynamic raises the base with the length.
          RC_PRE(plan.effective_base() <= in().contract().max_base);
          const double limit = in().contract().max_input_abs;
          const std::size_t n = positions.size() * static_cast<std::size_t>(heads * params.head_dim);
          const std::vector<double> x =
              c + 1 == calls.size()
                  ? first_x
                  : *gen_values(in().dtype, plan.attention_factor() > 1 ? limit / 2 : limit, n).as("x");
          harness::TypedBuffer b = buffer_of(in().dtype, x);
          run_rope(in(), plan, positions, heads, b);
          const std::vector<double> y = b.values();
          harness::measure_rope(params, positions, static_cast<std::size_t>(heads), x, y,
                                {&in().contract(), in().dtype}, fail_over_budget(), {},
                                RopeDirection::Forward);
          if (c == 0) first_x = x, first_y = y;
          if (c + 1 == calls.size()) {
            for (std::size_t i = 0; i < y.size(); ++i)
              if (std::bit_cast<std::uint64_t>(y[i]) != std::bit_cast<std::uint64_t>(first_y[i]))
                RC_FAIL(fmt::format(
                    "the prefill made again after the steps and the new sequence: element {} is {}, "
                    "first {}",
                    i, y[i], first_y[i]));
          }
        }
      });
}

}  // namespace

PE_INSTANTIATE(CallSequenceProps, selected(Family::Rope));

}  // namespace pe::testing
