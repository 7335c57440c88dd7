// Properties of the rotary forms beyond 1-D RoPE (pe/rope_form.h), over every RoPE instance. Each is a
// statement about the form that holds whatever the variant: M-RoPE reduces to 1-D RoPE, its axes are
// independent and relative, its two layouts differ only where their axes do; Pixtral's two pairings
// agree under a channel permutation; deinterleave is the interleaved rotation reordered; MLA's rotary
// channels at an offset rotate as a head of their own. RopeProps checks every form against the
// reference; these pin the structure a kernel can break without a large error on a random case.

#include <algorithm>
#include <numeric>

#include "pe/ref/reference.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

class RopeFormProps : public InstanceTest {
 protected:
  // M-RoPE params: 3 or 4 sections of any sizes (zeros included) summing to rotary_dim/2, any
  // scaling, the instance's pairing; the layout drawn first where none is given.
  RopeParams gen_mrope(std::optional<MropeLayout> layout = std::nullopt) const {
    if (!layout) layout = *gen_mrope_layout().as("M-RoPE layout");
    RopeParams p;
    do {
      p = RopeParams{*gen_dim(160).as("head_dim"), 0, *gen_base().as("base"), in().layout};
      p.rotary_dim = p.head_dim;
      p.scaling = *gen_scaling(p.rotary_dim).as("scaling");
      keep_ntk_base_above_one(p);
      p.form.mrope_section = draw_mrope_sections(p.rotary_dim / 2, *layout);
      p.form.mrope_layout = *layout;
    } while (RopePlan(p).effective_base() > in().contract().max_base);
    return p;
  }
  // Axial params (draw_axes_dim: 1 to 4 axes, each its own ladder), unscaled, the instance's pairing, rotary
  // channels filling the head; at least `min_axes` axes where the head has the pairs for them.
  RopeParams gen_axial(std::size_t min_axes = 1) const {
    RopeParams p{*gen_dim(160).as("head_dim"), 0, *gen_base().as("base"), in().layout};
    RC_PRE(p.base <= in().contract().max_base);  // gen_base stays below 1e7, every contract's max_base
    p.rotary_dim = p.head_dim;
    do {
      p.form.axes_dim = draw_axes_dim(p.rotary_dim / 2);
    } while (p.form.axes_dim.size() <
             std::min<std::size_t>(min_axes, static_cast<std::size_t>(p.rotary_dim / 2)));
    return p;
  }
  // M-RoPE or axial: the forms with several position axes.
  RopeParams gen_multi_axis() const {
    return *rc::gen::arbitrary<bool>().as("axial (else M-RoPE)") ? gen_axial() : gen_mrope();
  }
  std::vector<double> inputs(std::size_t count) const {
    return seeded_inputs(in().dtype, count, *rc::gen::arbitrary<std::uint64_t>().as("input seed"));
  }
  std::vector<double> rotated(const RopeParams& params, const std::vector<std::int64_t>& positions,
                              std::int64_t heads, const std::vector<double>& x,
                              RopeDirection direction = RopeDirection::Forward) const {
    TypedBuffer y = buffer_of(in().dtype, x);
    run_rope(in(), RopePlan(params), positions, heads, y, direction);
    return y.values();
  }
  double budget(const RopePlan& plan, std::int64_t p, std::size_t j, double a, double b) const {
    return rope_element_budget(in().contract(), plan, in().dtype, angle_bound(p, plan.inv_freq()[j]), j,
                               std::fabs(a) + std::fabs(b));
  }
  // Whether pair j's exact outputs at positions p and q are further apart than both budgets: a
  // correct kernel must then give different values.
  bool visibly_different(const RopePlan& plan, const ref::Rope& reference, std::int64_t p, std::int64_t q,
                         std::size_t j, double a, double b) const {
    const auto [p0, p1] = reference.rotate(p, j, a, b);
    const auto [q0, q1] = reference.rotate(q, j, a, b);
    const double gap = std::max(ref::abs_error(p0.value.convert_to<double>(), q0.value),
                                ref::abs_error(p1.value.convert_to<double>(), q1.value));
    return gap > 2 * (budget(plan, p, j, a, b) + budget(plan, q, j, a, b));
  }
};

bool same_bits(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

TEST_P(RopeFormProps, MropeWithEqualAxesIsOneDimensionalRope) {
  PE_RC_CHECK("M-RoPE with t = h = w (= e) gives 1-D RoPE's bits", [&] {
    const RopeParams mrope = gen_mrope();
    RopeParams text = mrope;
    text.form = {};
    const auto positions = *gen_positions(max_position(), 4).as("positions");
    std::vector<std::int64_t> axes;
    for (std::size_t a = 0; a < mrope.form.mrope_section.size(); ++a) {
      axes.insert(axes.end(), positions.begin(), positions.end());
    }
    const auto x = inputs(positions.size() * 2 * static_cast<std::size_t>(mrope.head_dim));
    const auto want = rotated(text, positions, 2, x), got = rotated(mrope, axes, 2, x);
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (!same_bits(got[i], want[i])) {
        RC_FAIL(fmt::format("element {}: M-RoPE {:.9g}, 1-D {:.9g}", i, got[i], want[i]));
      }
    }
  });
}

TEST_P(RopeFormProps, MovingOneAxisChangesExactlyItsPairs) {
  PE_RC_CHECK("moving axis a changes the pairs of a (where the exact values move) and no others", [&] {
    const RopeParams params = gen_multi_axis();
    const RopePlan plan(params);
    const std::size_t axes = plan.n_axes(), hd = plan.head_dim();
    const auto positions = *rc::gen::container<std::vector<std::int64_t>>(axes, gen_position(max_position()))
                                .as("positions (one token)");
    const std::size_t moved = *rc::gen::inRange<std::size_t>(0, axes).as("moved axis");
    auto other = positions;
    other[moved] = *gen_position(max_position()).as("moved to");
    const auto x = inputs(hd);
    const auto y = rotated(params, positions, 1, x), z = rotated(params, other, 1, x);
    const ref::Rope reference(params, std::max(positions[moved], other[moved]) + 1);
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const auto [o0, o1] = plan.output_channels(j);
      const auto [i0, i1] = plan.input_channels(j);
      const bool same = same_bits(y[o0], z[o0]) && same_bits(y[o1], z[o1]);
      if (plan.axis_of_pair(j) != moved) {
        if (!same)
          RC_FAIL(
              fmt::format("pair {} (axis {}) changed when axis {} moved", j, plan.axis_of_pair(j), moved));
      } else if (same &&
                 visibly_different(plan, reference, positions[moved], other[moved], j, x[i0], x[i1])) {
        RC_FAIL(fmt::format("pair {} (axis {}) did not change when its position moved {} -> {}", j, moved,
                            positions[moved], other[moved]));
      }
    }
  });
}

// ⟨R(m)q, R(n)k⟩ = A·⟨R(m - n)q, k⟩ with m, n, m - n position vectors (one per axis, n <= m): each
// pair turns by its own axis's difference. Tolerance as RopeProps.InnerProductDependsOnlyOnRelativePosition.
TEST_P(RopeFormProps, InnerProductDependsOnlyOnEachAxisDifference) {
  PE_RC_CHECK("<R(m)q, R(n)k> = A<R(m-n)q, k> per axis within the contract", [&] {
    const RopeParams params = gen_multi_axis();
    const RopePlan plan(params);
    const std::size_t axes = plan.n_axes(), hd = plan.head_dim();
    std::vector<std::int64_t> m(axes), n(axes), d(axes);
    for (std::size_t a = 0; a < axes; ++a) {
      m[a] = *gen_position(max_position()).as("m");
      n[a] = *gen_position(m[a]).as("n");
      d[a] = m[a] - n[a];
    }
    const auto q = inputs(hd), k = inputs(hd);
    const auto a = rotated(params, m, 1, q), b = rotated(params, n, 1, k), r = rotated(params, d, 1, q);
    const double A = plan.attention_factor();
    InnerProductCheck ip{.attention = A};
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const std::size_t axis = plan.axis_of_pair(j);
      const auto [i0, i1] = plan.output_channels(j);
      const auto [k0, k1] = plan.input_channels(j);
      const double ea = budget(plan, m[axis], j, q[k0], q[k1]), eb = budget(plan, n[axis], j, k[k0], k[k1]);
      const double er = budget(plan, d[axis], j, q[k0], q[k1]);
      for (const auto [i, ki] : {std::pair{i0, k0}, std::pair{i1, k1}})
        ip.add(a[i], b[i], r[i], k[ki], ea, eb, er);
    }
    ip.check(hd);
  });
}

// A non-square grid's cells (r, c), r < H != W > c, read with the axes of two equal dims swapped: every pair
// of those axes at a cell where r != c must turn by the other coordinate, visibly where the exact values
// differ by more than both budgets (a kernel that reads one axis's positions for both, or sorts them, is
// caught).
TEST_P(RopeFormProps, SwappingTwoAxesOfANonSquareGridChangesTheirPairs) {
  PE_RC_CHECK(
      "axial: swapping two axes' positions on an H x W grid (H != W) changes exactly their pairs", [&] {
        RopeParams params = gen_axial(2);
        RC_PRE(params.form.axes_dim.size() >= 2);
        const std::size_t a = 0, b = params.form.axes_dim.size() - 1;
        params.form.axes_dim[b] = params.form.axes_dim[a];
        params.rotary_dim = params.head_dim =
            std::accumulate(params.form.axes_dim.begin(), params.form.axes_dim.end(), std::int64_t{0});
        const RopePlan plan(params);
        const auto height = *rc::gen::inRange<std::int64_t>(1, 7).as("H");
        const auto width = *rc::gen::suchThat(rc::gen::inRange<std::int64_t>(1, 9), [&](std::int64_t w) {
                              return w != height;
                            }).as("W");
        const auto tokens = static_cast<std::size_t>(height * width);
        const std::size_t axes = plan.n_axes();
        std::vector<std::int64_t> grid(axes * tokens, 0), swapped(axes * tokens, 0);
        for (std::size_t t = 0; t < tokens; ++t) {
          const auto r = static_cast<std::int64_t>(t) / width, c = static_cast<std::int64_t>(t) % width;
          grid[a * tokens + t] = swapped[b * tokens + t] = r;
          grid[b * tokens + t] = swapped[a * tokens + t] = c;
        }
        const std::size_t hd = plan.head_dim();
        const auto x = inputs(tokens * hd);
        const auto y = rotated(params, grid, 1, x), z = rotated(params, swapped, 1, x);
        const ref::Rope reference(params, std::max(height, width) + 1);
        for (std::size_t t = 0; t < tokens; ++t) {
          for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
            const std::size_t axis = plan.axis_of_pair(j);
            const auto [o0, o1] = plan.output_channels(j);
            const auto [i0, i1] = plan.input_channels(j);
            const bool same =
                same_bits(y[t * hd + o0], z[t * hd + o0]) && same_bits(y[t * hd + o1], z[t * hd + o1]);
            const std::int64_t p = grid[axis * tokens + t], q = swapped[axis * tokens + t];
            if (p == q) {
              if (!same)
                RC_FAIL(fmt::format("token {} pair {} (axis {}) changed though its position did not", t, j,
                                    axis));
            } else if (same && visibly_different(plan, reference, p, q, j, x[t * hd + i0], x[t * hd + i1])) {
              RC_FAIL(fmt::format("token {} pair {} (axis {}) is the same at positions {} and {}", t, j, axis,
                                  p, q));
            }
          }
        }
      });
}

TEST_P(RopeFormProps, SectionedAndInterleavedDifferExactlyWhereTheirAxesDiffer) {
  PE_RC_CHECK("sectioned and interleaved M-RoPE agree bit for bit on pairs of the same axis", [&] {
    const RopeParams sectioned = gen_mrope(MropeLayout::Sectioned);
    RopeParams interleaved = sectioned;
    interleaved.form.mrope_layout = MropeLayout::Interleaved;
    const RopePlan s_plan(sectioned), i_plan(interleaved);
    const std::size_t axes = s_plan.n_axes(), hd = s_plan.head_dim();
    const auto positions = *rc::gen::container<std::vector<std::int64_t>>(axes, gen_position(max_position()))
                                .as("positions (one token)");
    const auto x = inputs(hd);
    const auto ys = rotated(sectioned, positions, 1, x), yi = rotated(interleaved, positions, 1, x);
    const ref::Rope reference(sectioned, *std::max_element(positions.begin(), positions.end()) + 1);
    std::size_t differing_axes = 0;
    for (std::size_t j = 0; j < s_plan.n_pairs(); ++j) {
      const std::size_t as = s_plan.axis_of_pair(j), ai = i_plan.axis_of_pair(j);
      const auto [o0, o1] = s_plan.output_channels(j);
      const auto [i0, i1] = s_plan.input_channels(j);
      const bool same = same_bits(ys[o0], yi[o0]) && same_bits(ys[o1], yi[o1]);
      if (as == ai || positions[as] == positions[ai]) {
        if (!same) RC_FAIL(fmt::format("pair {} reads axis {} in both layouts but differs", j, as));
      } else {
        ++differing_axes;
        if (same && visibly_different(s_plan, reference, positions[as], positions[ai], j, x[i0], x[i1])) {
          RC_FAIL(fmt::format("pair {} reads axis {} (sectioned) and {} (interleaved) but is the same", j, as,
                              ai));
        }
      }
    }
    RC_CLASSIFY(differing_axes > 0, "some pairs read different axes");
  });
}

// The forms that relate two pairings, on the interleaved instances of variants that have both.
class RopePairingFormProps : public RopeFormProps {};

// HF's PixtralRotaryEmbedding pairs half-split, Mistral's reference interleaved (complex pairs): the
// same rotation of the channels permuted by P (2j -> j, 2j+1 -> j + D/2).
TEST_P(RopePairingFormProps, PixtralHalfSplitIsInterleavedUnderPermutation) {
  PE_RC_CHECK("P·pixtral_interleaved(x) = pixtral_halfsplit(P·x), bit for bit", [&] {
    const std::int64_t hd = 4 * *rc::gen::inRange<std::int64_t>(1, 41).as("head_dim / 4");
    RopeParams mistral{hd, hd, *gen_base().as("base"), Layout::Interleaved};
    mistral.form.vision = VisionRope::Pixtral;
    RopeParams hf = mistral;
    hf.layout = Layout::HalfSplit;
    const auto positions = *gen_axes_positions(2, max_position(), 3).as("positions [h, w][patches]");
    const std::size_t patches = positions.size() / 2, half = static_cast<std::size_t>(hd / 2);
    const auto x = inputs(patches * static_cast<std::size_t>(hd));
    auto permuted = x;
    for (std::size_t t = 0; t < patches; ++t) {
      for (std::size_t j = 0; j < half; ++j) {
        permuted[t * hd + j] = x[t * hd + 2 * j];
        permuted[t * hd + half + j] = x[t * hd + 2 * j + 1];
      }
    }
    const auto y = rotated(mistral, positions, 1, x), yp = rotated(hf, positions, 1, permuted);
    for (std::size_t t = 0; t < patches; ++t) {
      for (std::size_t j = 0; j < half; ++j) {
        RC_ASSERT(same_bits(y[t * hd + 2 * j], yp[t * hd + j]));
        RC_ASSERT(same_bits(y[t * hd + 2 * j + 1], yp[t * hd + half + j]));
      }
    }
  });
}

TEST_P(RopePairingFormProps, DeinterleaveIsTheInterleavedRotationReordered) {
  PE_RC_CHECK("deinterleave(x) = P·interleaved(x) bit for bit, and back", [&] {
    const std::int64_t rotary = 2 * *rc::gen::inRange<std::int64_t>(1, 65).as("rotary pairs");
    const std::int64_t offset = 2 * *rc::gen::inRange<std::int64_t>(0, 5).as("pass-through pairs first");
    RopeParams il{offset + rotary, rotary, *gen_base().as("base"), Layout::Interleaved};
    il.rotary_offset = offset;
    il.scaling = *gen_scaling(rotary).as("scaling");
    keep_ntk_base_above_one(il);
    RC_PRE(RopePlan(il).effective_base() <= in().contract().max_base);
    RopeParams de = il;
    de.layout = Layout::Deinterleave;
    const auto positions = *gen_positions(max_position(), 3).as("positions");
    const std::size_t hd = static_cast<std::size_t>(il.head_dim), half = static_cast<std::size_t>(rotary / 2),
                      off = static_cast<std::size_t>(offset);
    const auto x = inputs(positions.size() * hd);
    const auto yi = rotated(il, positions, 1, x), yd = rotated(de, positions, 1, x);
    for (std::size_t t = 0; t < positions.size(); ++t) {
      const std::size_t row = t * hd + off;
      for (std::size_t j = 0; j < half; ++j) {
        RC_ASSERT(same_bits(yd[row + j], yi[row + 2 * j]));
        RC_ASSERT(same_bits(yd[row + half + j], yi[row + 2 * j + 1]));
      }
      for (std::size_t ch = 0; ch < off; ++ch) RC_ASSERT(same_bits(yd[t * hd + ch], x[t * hd + ch]));
    }
    // The inverse reads the half-split order and writes the interleaved one.
    const auto back_d = rotated(de, positions, 1, yd, RopeDirection::Inverse);
    const auto back_i = rotated(il, positions, 1, yi, RopeDirection::Inverse);
    for (std::size_t i = 0; i < x.size(); ++i) RC_ASSERT(same_bits(back_d[i], back_i[i]));
  });
}

TEST_P(RopeFormProps, RotaryChannelsAtAnOffsetRotateAsAHeadOfTheirOwn) {
  PE_RC_CHECK("[nope | pe]: pe rotates as a head of rotary_dim, nope keeps its bits", [&] {
    const std::int64_t rotary = *gen_dim(128).as("rotary_dim");
    const std::int64_t nope = 2 * *rc::gen::inRange<std::int64_t>(1, 80).as("pass-through pairs");
    const std::int64_t after = 2 * *rc::gen::inRange<std::int64_t>(0, 3).as("pairs after the rotary ones");
    RopeParams mla{nope + rotary + after, rotary, *gen_base().as("base"), in().layout};
    mla.rotary_offset = nope;
    mla.scaling = *gen_scaling(rotary).as("scaling");
    keep_ntk_base_above_one(mla);
    RC_PRE(RopePlan(mla).effective_base() <= in().contract().max_base);
    RopeParams head = mla;
    head.head_dim = rotary;
    head.rotary_offset = 0;
    const auto positions = *gen_positions(max_position(), 3).as("positions");
    const std::size_t hd = static_cast<std::size_t>(mla.head_dim), r = static_cast<std::size_t>(rotary),
                      off = static_cast<std::size_t>(nope);
    const auto x = inputs(positions.size() * hd);
    std::vector<double> slice;
    for (std::size_t t = 0; t < positions.size(); ++t) {
      slice.insert(slice.end(), x.begin() + static_cast<std::ptrdiff_t>(t * hd + off),
                   x.begin() + static_cast<std::ptrdiff_t>(t * hd + off + r));
    }
    const auto y = rotated(mla, positions, 1, x), want = rotated(head, positions, 1, slice);
    for (std::size_t t = 0; t < positions.size(); ++t) {
      for (std::size_t ch = 0; ch < hd; ++ch) {
        const double expected = ch >= off && ch < off + r ? want[t * r + ch - off] : x[t * hd + ch];
        if (!same_bits(y[t * hd + ch], expected)) {
          RC_FAIL(
              fmt::format("token {} channel {}: {:.9g}, expected {:.9g}", t, ch, y[t * hd + ch], expected));
        }
      }
    }
  });
}

// Invalid forms are refused by the plan, naming the parameter and both numbers; a batch whose axes
// differ from the plan's is refused before any element is written.
std::string message_of(const RopeParams& p) {
  try {
    RopePlan plan(p);
  } catch (const InvalidArgument& e) {
    return e.parameter() + ": " + e.what();
  }
  return "accepted";
}

TEST(RopeFormValidation, PlansNameTheParameterAndItsValues) {
  RopeParams sections{128, 0, 1e4, Layout::HalfSplit};
  sections.form.mrope_section = {16, 24, 20};
  EXPECT_EQ(message_of(sections),
            "mrope_section: mrope_section must sum to rotary_dim/2 = 64, got 60 (16,24,20)");
  sections.form.mrope_section = {64, 0};
  EXPECT_EQ(message_of(sections).rfind("mrope_section: mrope_section must have 3 or 4 entries", 0), 0u);
  RopeParams offset{192, 64, 1e4, Layout::Interleaved};
  offset.rotary_offset = -2;
  EXPECT_EQ(message_of(offset), "rotary_offset: rotary_offset must be in [0, head_dim=192), got -2");
  offset.rotary_offset = 150;
  EXPECT_EQ(message_of(offset),
            "rotary_dim: rotary_dim must be even and in [2, head_dim - rotary_offset = 42] (0: all of them), "
            "got 64");
  RopeParams vision{74, 0, 1e4, Layout::HalfSplit};
  vision.form.vision = VisionRope::Qwen2vl;
  EXPECT_EQ(message_of(vision),
            "head_dim: head_dim must be a multiple of 4 for vision qwen2vl (D/4 pairs per axis), got 74");
  vision.head_dim = 64;
  vision.scaling.type = RopeScalingType::Linear;
  vision.scaling.factor = 2;
  EXPECT_EQ(message_of(vision), "scaling: vision qwen2vl takes no scaling, got linear");
  RopeParams axial{128, 0, 1e4, Layout::Interleaved};
  axial.form.axes_dim = {16, 56, 48};
  EXPECT_EQ(message_of(axial),
            "axes_dim: axes_dim must sum to rotary_dim = 128, got 120 (axes_dim 16,56,48)");
  axial.form.axes_dim = {16, 55, 57};
  EXPECT_EQ(
      message_of(axial),
      "axes_dim: axes_dim entries must be even and in [2, rotary_dim = 128], got 55 (axes_dim 16,55,57)");
  axial.form.axes_dim = {16, 56, 56};
  axial.form.mrope_section = {8, 28, 28};
  EXPECT_EQ(message_of(axial),
            "axes_dim: axes_dim is a form of its own: give it without mrope_section or "
            "vision (axes_dim 16,56,56)");
  axial.form.mrope_section.clear();
  axial.scaling.type = RopeScalingType::Linear;
  axial.scaling.factor = 2;
  EXPECT_EQ(message_of(axial), "scaling: axial RoPE (axes_dim 16,56,56) takes no scaling, got linear");
  RopeParams wide{8192, 8192, 1e4, Layout::Deinterleave};
  EXPECT_EQ(message_of(wide),
            "rotary_dim: rotary_dim must be at most 4096 for layout deinterleave, got 8192");
}

TEST(RopeFormValidation, AxesOtherThanThePlansLeaveTheBufferUntouched) {
  RopeParams p{8, 0, 1e4, Layout::HalfSplit};
  p.form.mrope_section = {2, 1, 1};
  const RopePlan plan(p);
  const Variant* v = find_variant("rope.scalar_f64");
  ASSERT_NE(v, nullptr);
  std::vector<double> x(2 * 8, 0.25);
  const std::vector<double> before = x;
  const std::vector<std::int64_t> two_axes = {1, 2, 3, 4};  // [2][2]: the plan reads 3
  RopeBatch batch = RopeBatch::tokens_first(std::span(two_axes).first(2), 1, 8);
  batch.positions = two_axes;
  batch.n_axes = 2;
  try {
    rope_apply(*v, plan, batch, buffer(std::span<double>(x)));
    ADD_FAILURE() << "accepted 2 axes for a 3-axis plan";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "n_axes");
    EXPECT_EQ(std::string(e.what()), "n_axes must be the plan's 3, got 2");
  }
  const std::vector<std::int64_t> seven = {1, 2, 3, 4, 5, 6, 7};  // not [3][tokens]
  EXPECT_THROW(rope_apply(*v, plan, seven, 1, std::span<double>(x)), InvalidArgument);
  EXPECT_EQ(x, before);
}

PE_INSTANTIATE(RopeFormProps, selected(Family::Rope));
PE_INSTANTIATE(RopePairingFormProps, interleaved_of_both_pairings());

}  // namespace
}  // namespace pe::testing
