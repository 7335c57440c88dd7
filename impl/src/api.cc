#include "pe/api.h"

#include <string>

#include "detail/check.h"

namespace pe {
namespace {

using detail::fail;

void check_variant(const Variant& variant, Family family, Layout layout, DType dtype,
                   const char* buffer_name) {
  if (variant.family() != family) {
    fail("variant", "variant " + variant.name() + " is not a " + std::string(to_string(family)) + " variant");
  }
  if (!variant.supports(layout)) {
    fail("layout",
         "variant " + variant.name() + " does not support layout " + std::string(to_string(layout)));
  }
  if (!variant.supports(dtype)) {
    fail(buffer_name, "variant " + variant.name() + " does not support " + buffer_name + ".dtype " +
                          std::string(to_string(dtype)));
  }
}

void check_positions(std::span<const std::int64_t> positions, const char* name = "positions") {
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] < 0 || positions[i] > kMaxPosition) {
      fail(name, std::string(name) + "[" + std::to_string(i) + "] must be in [0, 2^53], got " +
                     std::to_string(positions[i]));
    }
  }
}

// Positions are [n_axes][tokens]: their count must be a multiple of the plan's axes.
void check_axes(const RopePlan& plan, std::span<const std::int64_t> positions) {
  if (positions.size() % plan.n_axes() != 0) {
    fail("positions",
         "positions.size must be a multiple of the plan's n_axes = " + std::to_string(plan.n_axes()) +
             " ([n_axes][tokens]), got " + std::to_string(positions.size()));
  }
}

// Messages are built only on failure: the checks run on every call and must not allocate.
std::size_t checked_product(std::initializer_list<std::size_t> factors, const char* what) {
  std::size_t product = 1;
  for (std::size_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) {
      std::string shown;
      for (std::size_t g : factors) shown += (shown.empty() ? "" : " x ") + std::to_string(g);
      fail(what, std::string(what) + " size " + shown + " overflows size_t");
    }
  }
  return product;
}

// a + b for a batch's extent in x: a sum past size_t would make a far row look inside the buffer.
std::size_t checked_sum(std::size_t a, std::size_t b) {
  std::size_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    fail("x", "the batch's extent " + std::to_string(a) + " + " + std::to_string(b) + " overflows size_t");
  }
  return sum;
}

void check_buffer(const Buffer& b, std::size_t expected, const char* name, const char* shape) {
  if (b.size != expected) {
    fail(name, std::string(name) + ".size must be " + std::string(shape) + " = " + std::to_string(expected) +
                   ", got " + std::to_string(b.size));
  }
  if (b.data == nullptr && b.size != 0) fail(name, std::string(name) + ".data is null");
  // The byte size must be addressable too.
  checked_product({b.size, size_of(b.dtype)}, name);
}

}  // namespace

void sinusoidal_table(const Variant& variant, const SinusoidalPlan& plan,
                      std::span<const std::int64_t> positions, Buffer out) {
  check_variant(variant, Family::Sinusoidal, plan.layout(), out.dtype, "out");
  check_positions(positions);
  const std::size_t n = checked_product({positions.size(), plan.dim()}, "out");
  check_buffer(out, n, "out", "n_positions x dim");
  static_cast<const SinusoidalVariant&>(variant).table(plan, positions, out);
}

void sinusoidal_add(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, Buffer embeddings,
                    std::span<const std::uint8_t> padding) {
  check_variant(variant, Family::Sinusoidal, plan.layout(), embeddings.dtype, "embeddings");
  check_positions(positions);
  const std::size_t n = checked_product({positions.size(), plan.dim()}, "embeddings");
  check_buffer(embeddings, n, "embeddings", "n_positions x dim");
  if (!padding.empty() && padding.size() != positions.size()) {
    fail("padding", "padding.size must be 0 or n_positions = " + std::to_string(positions.size()) + ", got " +
                        std::to_string(padding.size()));
  }
  static_cast<const SinusoidalVariant&>(variant).add(plan, positions, padding, embeddings);
}

void rope_apply(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                std::int64_t n_heads, Buffer x, RopeDirection direction) {
  check_variant(variant, Family::Rope, plan.layout(), x.dtype, "x");
  if (n_heads <= 0) fail("n_heads", "n_heads must be positive, got " + std::to_string(n_heads));
  check_axes(plan, positions);
  check_positions(positions);
  const auto heads = static_cast<std::size_t>(n_heads);
  const std::size_t n = checked_product({positions.size() / plan.n_axes(), heads, plan.head_dim()}, "x");
  check_buffer(x, n, "x", "n_tokens x n_heads x head_dim");
  RopeBatch batch = RopeBatch::tokens_first(positions, heads, plan.head_dim());
  batch.n_axes = plan.n_axes();
  static_cast<const RopeVariant&>(variant).apply(plan, batch, direction, x);
}

void rope_apply(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                RopeDirection direction) {
  check_variant(variant, Family::Rope, plan.layout(), x.dtype, "x");
  // Text RoPE reads one position axis; multi-axis plans (M-RoPE, 2-D vision) read more.
  if (batch.n_axes != plan.n_axes()) {
    fail("n_axes", "n_axes must be the plan's " + std::to_string(plan.n_axes()) + ", got " +
                       std::to_string(batch.n_axes));
  }
  check_axes(plan, batch.positions);
  if (batch.heads == 0) fail("heads", "heads must be positive, got 0");
  check_positions(batch.positions);
  if (x.data == nullptr && x.size != 0) fail("x", "x.data is null");
  checked_product({x.size, size_of(x.dtype)}, "x");
  const std::size_t tokens = batch.tokens(), hd = plan.head_dim();
  if (tokens == 0) return;
  // Rows must not overlap: order the two row axes by stride; the inner one steps over whole rows,
  // the outer one over the whole inner extent.
  struct Axis {
    std::size_t stride, count;
    const char* name;
  };
  Axis inner{batch.head_stride, batch.heads, "head_stride"},
      outer{batch.token_stride, tokens, "token_stride"};
  if (inner.count == 1 || (outer.count > 1 && outer.stride < inner.stride)) std::swap(inner, outer);
  if (inner.count > 1 && inner.stride < hd) {
    fail(inner.name, std::string(inner.name) + " must be >= head_dim = " + std::to_string(hd) +
                         " (rows would overlap), got " + std::to_string(inner.stride));
  }
  const std::size_t inner_extent = checked_sum(checked_product({inner.count - 1, inner.stride}, "x"), hd);
  if (outer.count > 1 && outer.stride < inner_extent) {
    fail(outer.name, std::string(outer.name) + " must be >= " + std::to_string(inner_extent) +
                         " (rows would overlap), got " + std::to_string(outer.stride));
  }
  const std::size_t extent = checked_sum(checked_product({outer.count - 1, outer.stride}, "x"), inner_extent);
  if (x.size < extent) {
    fail("x", "x.size must be at least the batch's extent " + std::to_string(extent) + ", got " +
                  std::to_string(x.size));
  }
  static_cast<const RopeVariant&>(variant).apply(plan, batch, direction, x);
}

void alibi_slopes(const Variant& variant, const AlibiPlan& plan, Buffer out) {
  check_variant(variant, Family::Alibi, plan.params().layout, out.dtype, "out");
  check_buffer(out, plan.n_heads(), "out", "n_heads");
  static_cast<const AlibiVariant&>(variant).slopes(plan, out);
}

void alibi_bias(const Variant& variant, const AlibiPlan& plan, std::span<const std::int64_t> queries,
                std::span<const std::int64_t> keys, Buffer out) {
  check_variant(variant, Family::Alibi, plan.params().layout, out.dtype, "out");
  check_positions(queries, "queries");
  check_positions(keys, "keys");
  const std::size_t n = checked_product({plan.n_heads(), queries.size(), keys.size()}, "out");
  check_buffer(out, n, "out", "n_heads x n_queries x n_keys");
  static_cast<const AlibiVariant&>(variant).bias(plan, queries, keys, out);
}

}  // namespace pe
