// Invalid parameters over every instance: one exception type, a message naming the parameter and
// its value, and the caller's buffers bit-for-bit unchanged.

#include <limits>

#include "support/property_util.h"

namespace pe::testing {
namespace {

// Runs f, which must throw InvalidArgument for `parameter` with `value` in its message.
template <class F>
void expect_rejected(F&& f, const std::string& parameter, const std::string& value) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    if (e.parameter() != parameter || what.find(parameter) == std::string::npos ||
        what.find(value) == std::string::npos) {
      RC_FAIL(fmt::format("expected an error naming {} = {}, got [{}] \"{}\"", parameter, value,
                          e.parameter(), what));
    }
    return;
  }
  RC_FAIL(fmt::format("{} = {} was accepted", parameter, value));
}

// Runs f, which must throw InvalidArgument for `parameter` (any, when empty) with `fragment` in its
// message; `call` names what f tried, for the failure when it does not throw.
template <class F>
void expect_invalid(F&& f, std::string_view parameter, const std::string& fragment, const std::string& call) {
  try {
    f();
    ADD_FAILURE() << call << " accepted";
  } catch (const InvalidArgument& e) {
    if (!parameter.empty()) {
      EXPECT_EQ(e.parameter(), parameter) << e.what();
    }
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// A buffer of random bytes; the test checks it is unchanged after a rejected call.
TypedBuffer random_buffer(DType type, std::size_t size) {
  TypedBuffer b(type, size);
  const auto v = *gen_values(type, 1e30, size).as("buffer contents");
  for (std::size_t i = 0; i < size; ++i) b.set(i, v[i]);
  return b;
}

class ValidationProps : public InstanceTest {
 protected:
  // Runs the instance on a buffer of `size` elements, with its own family's entry point.
  void call(std::int64_t dim, double base, std::span<const std::int64_t> positions, Buffer b,
            std::int64_t heads = 1) const {
    family().call(*in().variant, in().layout, dim, base, positions, b, heads);
  }
  std::string dim_name() const { return std::string(family().dim_argument); }
};

TEST_P(ValidationProps, OddZeroOrNegativeDimensionIsRejected) {
  PE_RC_CHECK(
      "zero or negative dim (odd too, for families of channel pairs): InvalidArgument naming it", [&] {
        const rc::Gen<std::int64_t> bad =
            rc::gen::element<std::int64_t>(0, -2, -7, std::numeric_limits<std::int64_t>::min());
        const std::int64_t dim =
            *(family().even_dim ? rc::gen::weightedOneOf<std::int64_t>({{4, gen_odd_dim()}, {1, bad}}) : bad)
                 .as("dim");
        const std::vector<std::int64_t> positions = {0, 1};
        TypedBuffer b = random_buffer(in().dtype, 8);
        const TypedBuffer before = b;
        expect_rejected([&] { call(dim, 10000.0, positions, b.view()); }, dim_name(), std::to_string(dim));
        RC_ASSERT(b.bytes() == before.bytes());
      });
}

TEST_P(ValidationProps, BaseAtMostOneOrNotFiniteIsRejected) {
  PE_RC_CHECK("base <= 1, NaN or infinite: InvalidArgument naming it", [&] {
    const double base =
        *rc::gen::element(1.0, 0.5, 0.0, -0.0, -10000.0, std::nan(""),
                          std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity())
             .as("base");
    const std::vector<std::int64_t> positions = {3};
    TypedBuffer b = random_buffer(in().dtype, 4);
    const TypedBuffer before = b;
    expect_rejected([&] { call(4, base, positions, b.view()); }, "base", fmt::format("{}", base));
    RC_ASSERT(b.bytes() == before.bytes());
  });
}

TEST_P(ValidationProps, BufferOfTheWrongSizeIsRejected) {
  PE_RC_CHECK("a buffer whose size is not n x [heads x] dim: InvalidArgument naming it", [&] {
    const std::int64_t dim = *gen_dim(64).as("dim");
    const auto positions = *gen_positions(1000, 4).as("positions");
    const std::size_t right = positions.size() * static_cast<std::size_t>(dim);
    const std::size_t size =
        *rc::gen::suchThat(rc::gen::inRange<std::size_t>(0, 2 * right + 3), [&](std::size_t s) {
           return s != right;
         }).as("buffer size");
    TypedBuffer b = random_buffer(in().dtype, size);
    const TypedBuffer before = b;
    expect_rejected([&] { call(dim, 10000.0, positions, b.view()); }, std::string(family().data_argument),
                    "got " + std::to_string(size));
    RC_ASSERT(b.bytes() == before.bytes());
  });
}

TEST_P(ValidationProps, PositionOutsideZeroTo2Pow53IsRejected) {
  PE_RC_CHECK("a negative position or one above 2^53: InvalidArgument naming it", [&] {
    auto positions = *gen_positions(1000, 4).as("positions");
    const std::size_t at = *rc::gen::inRange<std::size_t>(0, positions.size()).as("index");
    positions[at] =
        *rc::gen::oneOf(
             rc::gen::inRange<std::int64_t>(std::numeric_limits<std::int64_t>::min(), 0),
             rc::gen::inRange<std::int64_t>(kMaxPosition + 1, std::numeric_limits<std::int64_t>::max()))
             .as("bad position");
    TypedBuffer b = random_buffer(in().dtype, positions.size() * 8);
    const TypedBuffer before = b;
    const std::string name(family().positions_argument);
    expect_rejected([&] { call(8, 10000.0, positions, b.view()); }, name,
                    fmt::format("{}[{}] must be in [0, 2^53], got {}", name, at, positions[at]));
    RC_ASSERT(b.bytes() == before.bytes());
  });
}

TEST_P(ValidationProps, LayoutOfAnotherFamilyIsRejected) {
  int tried = 0;
  for (Layout wrong : {Layout::Interleaved, Layout::Concatenated, Layout::HalfSplit}) {
    if (layout_belongs_to(wrong, in().variant->family())) continue;
    ++tried;
    const std::vector<std::int64_t> positions = {1};
    std::vector<unsigned char> bytes(8 * size_of(in().dtype), 0x5A);
    const auto before = bytes;
    expect_invalid(
        [&] {
          family().call(*in().variant, wrong, 8, 10000.0, positions, Buffer{bytes.data(), 8, in().dtype}, 1);
        },
        "layout", std::string(to_string(wrong)), fmt::format("layout {}", to_string(wrong)));
    EXPECT_EQ(bytes, before);
  }
  EXPECT_GT(tried, 0) << "every layout belongs to " << family().name;
}

TEST_P(ValidationProps, OutputTypeOutsideTheContractIsRejected) {
  for (DType t : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    if (in().variant->supports(t)) continue;
    std::vector<unsigned char> bytes(8 * size_of(t), 0xA5);
    const auto before = bytes;
    const std::vector<std::int64_t> positions = {1};
    expect_invalid(
        [&] {
          call(8, 10000.0, positions, Buffer{bytes.data(), 8, t});
        },
        "", std::string(to_string(t)), std::string(to_string(t)));
    EXPECT_EQ(bytes, before);
  }
}

TEST_P(ValidationProps, NullDataWithElementsIsRejected) {
  const std::vector<std::int64_t> positions = {1};
  EXPECT_THROW(call(8, 10000.0, positions, Buffer{nullptr, 8, in().dtype}), InvalidArgument);
}

TEST_P(ValidationProps, VariantOfAnotherFamilyIsRejected) {
  const std::vector<std::int64_t> positions = {1};
  std::vector<unsigned char> bytes(8 * size_of(in().dtype), 0x5A);
  const auto before = bytes;
  const Buffer b{bytes.data(), 8, in().dtype};
  int tried = 0;
  for (const harness::FamilyTraits* other : harness::family_traits()) {
    if (other->family == in().variant->family()) continue;
    ++tried;
    expect_invalid(
        [&] { other->call(*in().variant, default_layout(other->family), 8, 10000.0, positions, b, 1); },
        "variant", "", fmt::format("{}'s entry point given {}", other->name, in().variant->name()));
  }
  EXPECT_GT(tried, 0);
  EXPECT_EQ(bytes, before);
}

class RopeValidation : public ValidationProps {};

TEST_P(RopeValidation, RotaryDimOddOrLargerThanHeadDimIsRejected) {
  PE_RC_CHECK("odd, negative or oversize rotary_dim: InvalidArgument naming it", [&] {
    const std::int64_t head_dim = *gen_dim(256).as("head_dim");
    const std::int64_t rotary = *rc::gen::oneOf(rc::gen::map(rc::gen::inRange<std::int64_t>(0, head_dim / 2),
                                                             [](std::int64_t r) { return 2 * r + 1; }),
                                                rc::gen::inRange<std::int64_t>(head_dim + 1, 4 * head_dim),
                                                rc::gen::inRange<std::int64_t>(-100, 0))
                                     .as("rotary_dim");
    expect_rejected(
        [&] {
          RopePlan({head_dim, rotary, 10000.0, in().layout});
        },
        "rotary_dim", std::to_string(rotary));
  });
}

TEST_P(RopeValidation, HeadCountNotPositiveOrOverflowingIsRejected) {
  const std::vector<std::int64_t> positions = {1, 2};
  TypedBuffer b = TypedBuffer(in().dtype, 2 * 8);
  const TypedBuffer before = b;
  const RopePlan plan({8, 0, 10000.0, in().layout});
  for (std::int64_t heads : {std::int64_t{0}, std::int64_t{-3}}) {
    expect_invalid([&] { rope_apply(*in().variant, plan, positions, heads, b.view()); }, "n_heads",
                   std::to_string(heads), fmt::format("n_heads {}", heads));
  }
  // 2 tokens x 2^62 heads x 8 channels overflows size_t before any buffer is read.
  expect_invalid([&] { rope_apply(*in().variant, plan, positions, std::int64_t{1} << 62, b.view()); }, "x",
                 "overflows", "overflowing size");
  EXPECT_EQ(b.bytes(), before.bytes());
}

TEST_P(RopeValidation, BatchWhoseRowsOverlapOrLeaveTheBufferIsRejected) {
  const std::vector<std::int64_t> positions = {1, 2, 3};
  const RopePlan plan({8, 0, 10000.0, in().layout});
  TypedBuffer b(in().dtype, 3 * 2 * 8);
  for (std::size_t i = 0; i < b.size(); ++i) b.set(i, 0.25 * static_cast<double>(i) - 3);
  const TypedBuffer before = b;
  struct Bad {
    RopeBatch batch;
    const char* parameter;
    const char* value;
  };
  const Bad bad[] = {
      {{positions, 1, 2, 16, 7}, "head_stride", "got 7"},    // heads 7 apart, rows 8 long
      {{positions, 1, 2, 15, 8}, "token_stride", "got 15"},  // tokens inside the previous token's heads
      {{positions, 1, 2, 8, 16}, "head_stride", "got 16"},   // heads-first, heads inside the tokens
      {{positions, 1, 2, 17, 8}, "x", "got 48"},             // rows past the end of x
      {{positions, 3, 2, 16, 8}, "n_axes", "got 3"},         // a multi-axis batch for a text plan
      {{positions, 1, 0, 16, 8}, "heads", "got 0"},
      {{std::span(positions).first(1), 1, 2, 16, SIZE_MAX - 3}, "x", "overflows"},  // a row's end wraps
      {RopeBatch::tokens_first(std::span(positions).first(1), std::size_t{1} << 61, 8), "x", "overflows"},
  };
  for (const Bad& c : bad)
    expect_invalid([&] { rope_apply(*in().variant, plan, c.batch, b.view()); }, c.parameter, c.value,
                   c.parameter);
  EXPECT_EQ(b.bytes(), before.bytes());
}

class SinusoidalValidation : public ValidationProps {};

TEST_P(SinusoidalValidation, PaddingMaskOfTheWrongSizeIsRejected) {
  const std::vector<std::int64_t> positions = {1, 2, 3};
  TypedBuffer b = TypedBuffer(in().dtype, 3 * 8);
  b.set(5, 0.25);
  const TypedBuffer before = b;
  const std::vector<std::uint8_t> padding = {0, 1};
  expect_invalid(
      [&] {
        sinusoidal_add(*in().variant, SinusoidalPlan({8, 10000.0, in().layout}), positions, b.view(),
                       padding);
      },
      "padding", "got 2", "padding of size 2 for 3 positions");
  EXPECT_EQ(b.bytes(), before.bytes());
}

PE_INSTANTIATE(ValidationProps, selected());
PE_INSTANTIATE(RopeValidation, selected(Family::Rope));
PE_INSTANTIATE(SinusoidalValidation, selected(Family::Sinusoidal));

}  // namespace
}  // namespace pe::testing
