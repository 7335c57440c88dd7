#include "pe/api.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "detail/check.h"
#include "detail/guarded_call.h"
#include "detail/streaming_call.h"

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

// Pieces smaller than this many elements are not worth a thread's wake-up (a few microseconds).
constexpr std::size_t kMinElementsPerTask = std::size_t{1} << 15;
constexpr std::size_t kMaxTasks = 256;

Buffer slice(const Buffer& b, std::size_t first, std::size_t count) noexcept {
  return {static_cast<unsigned char*>(b.data) + first * size_of(b.dtype), count, b.dtype};
}

// Row cuts for up to `parts` pieces of about equal size, each cut at a row the variant computes
// directly (pe/contract.h's state_rows: not a run's continuation, or state_rows rows after the last
// direct one), so that every piece gives the whole call's bits. Returns the number of pieces;
// cuts[0] = 0, cuts[pieces] = positions.size().
std::size_t cut_rows(std::span<const std::int64_t> positions, std::int64_t state_rows, std::size_t parts,
                     std::size_t* cuts) noexcept {
  const std::size_t n = positions.size();
  std::size_t pieces = 0;
  cuts[0] = 0;
  std::int64_t advanced = 0;
  for (std::size_t r = 1; r < n && pieces + 1 < parts; ++r) {
    const bool direct = positions[r] != positions[r - 1] + 1 || advanced >= state_rows;
    advanced = direct ? 0 : advanced + 1;
    if (direct && r >= (pieces + 1) * n / parts) cuts[++pieces] = r;
  }
  cuts[++pieces] = n;
  return pieces;
}

std::size_t tasks_for(const ThreadPool& pool, std::size_t units, std::size_t elements) noexcept {
  const std::size_t by_size = std::max<std::size_t>(1, elements / kMinElementsPerTask);
  return std::min({pool.threads(), units, by_size, kMaxTasks});
}

struct TableTask {
  const SinusoidalVariant* variant;
  const SinusoidalPlan* plan;
  std::span<const std::int64_t> positions;
  std::span<const std::uint8_t> padding;
  Buffer data;
  bool add;
  std::size_t cuts[kMaxTasks + 1];

  static void run(void* self, std::size_t i) {
    const auto& t = *static_cast<const TableTask*>(self);
    const std::size_t r0 = t.cuts[i], rows = t.cuts[i + 1] - r0, d = t.plan->dim();
    const Buffer piece = slice(t.data, r0 * d, rows * d);
    const detail::WholeCallBytes whole(t.data.size * size_of(t.data.dtype));
    if (t.add) {
      t.variant->add(*t.plan, t.positions.subspan(r0, rows),
                     t.padding.empty() ? t.padding : t.padding.subspan(r0, rows), piece);
    } else {
      t.variant->table(*t.plan, t.positions.subspan(r0, rows), piece);
    }
  }
};

// A table or a fused add over the pool: row pieces cut where the contract allows.
void run_table_bare(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, Buffer data,
                    std::span<const std::uint8_t> padding, bool add, ThreadPool* pool) {
  const auto& v = static_cast<const SinusoidalVariant&>(variant);
  const std::size_t parts = pool == nullptr ? 1 : tasks_for(*pool, positions.size(), data.size);
  if (parts <= 1) {
    if (add) {
      v.add(plan, positions, padding, data);
    } else {
      v.table(plan, positions, data);
    }
    return;
  }
  TableTask task{&v, &plan, positions, padding, data, add, {}};
  const std::size_t pieces = cut_rows(positions, variant.contract().state_rows, parts, task.cuts);
  pool->run(pieces, &TableTask::run, &task);
}

void run_table(const Variant& variant, const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
               Buffer data, std::span<const std::uint8_t> padding, bool add, ThreadPool* pool) {
  if (!detail::guard_applies(variant))
    return run_table_bare(variant, plan, positions, data, padding, add, pool);
  detail::guarded_rows(
      variant, positions.size(), plan.dim(), padding, data, add ? "embeddings" : "table",
      [&](Buffer guarded) { run_table_bare(variant, plan, positions, guarded, padding, add, pool); });
}

struct RopeTask {
  const RopeVariant* variant;
  const RopePlan* plan;
  RopeBatch batch;
  RopeDirection direction;
  Buffer x;
  bool by_tokens;
  std::size_t parts;
  std::size_t cuts[kMaxTasks + 1];

  static void run(void* self, std::size_t i) {
    const auto& t = *static_cast<const RopeTask*>(self);
    RopeBatch b = t.batch;
    std::size_t first = 0;
    if (t.by_tokens) {
      b.positions = t.batch.positions.subspan(t.cuts[i], t.cuts[i + 1] - t.cuts[i]);
      first = t.cuts[i] * t.batch.token_stride;
    } else {
      const std::size_t h0 = i * t.batch.heads / t.parts, h1 = (i + 1) * t.batch.heads / t.parts;
      b.heads = h1 - h0;
      first = h0 * t.batch.head_stride;
    }
    const detail::WholeCallBytes whole(t.x.size * size_of(t.x.dtype));
    t.variant->apply(*t.plan, b, t.direction, slice(t.x, first, t.x.size - first));
  }
};

// RoPE over the pool. Text RoPE (one position axis) by tokens, cut at the contract's direct rows like
// a table: each thread's rows are then one contiguous block of memory (by heads, the threads interleave
// within every token, and a memory-bound call got slower). Other forms by heads: a row's bits do not
// depend on the other rows of its call.
void run_rope_bare(const Variant& variant, const RopePlan& plan, const RopeBatch& batch,
                   RopeDirection direction, Buffer x, ThreadPool* pool) {
  const auto& v = static_cast<const RopeVariant&>(variant);
  const std::size_t tokens = batch.tokens(), elements = tokens * batch.heads * plan.head_dim();
  const bool by_tokens = batch.n_axes == 1 && tokens >= batch.heads;
  const std::size_t units = by_tokens ? tokens : batch.heads;
  const std::size_t parts = pool == nullptr ? 1 : tasks_for(*pool, units, elements);
  if (parts <= 1) {
    v.apply(plan, batch, direction, x);
    return;
  }
  RopeTask task{&v, &plan, batch, direction, x, by_tokens, parts, {}};
  if (by_tokens) task.parts = cut_rows(batch.positions, variant.contract().state_rows, parts, task.cuts);
  pool->run(task.parts, &RopeTask::run, &task);
}

void run_rope(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
              Buffer x, ThreadPool* pool) {
  if (!detail::guard_applies(variant)) return run_rope_bare(variant, plan, batch, direction, x, pool);
  detail::guarded_rope(variant, plan, batch, x, [&](const RopeBatch& guarded, Buffer gx) {
    run_rope_bare(variant, plan, guarded, direction, gx, pool);
  });
}

}  // namespace

namespace {

// The form of the table a variant's contract covers. One that does not read the forms (a C plugin's,
// Contract::table_switches false) would compute the paper's table in their place: refused naming the first
// form asked for. A shift past the contract's max_freq_shift leaves its derivation: refused too.
void check_forms(const Variant& variant, const SinusoidalPlan& plan, bool real_positions) {
  const SinusoidalParams& p = plan.params();
  const Contract& c = variant.contract();
  if (p.downscale_freq_shift > c.max_freq_shift) {
    fail("downscale_freq_shift",
         "variant " + variant.name() +
             "'s contract covers downscale_freq_shift <= " + detail::show(c.max_freq_shift) +
             " (an exponent i/(dim/2 - shift) <= 1), got " + detail::show(p.downscale_freq_shift));
  }
  if (c.table_switches) return;
  const char* form = p.flip_sin_to_cos             ? "flip_sin_to_cos"
                     : p.downscale_freq_shift != 0 ? "downscale_freq_shift"
                     : p.scale != 1                ? "scale"
                     : plan.has_pad()              ? "dim"
                     : real_positions              ? "positions"
                                                   : nullptr;
  if (form == nullptr) return;
  const std::string given = std::string(form) == "dim"         ? std::to_string(p.dim)
                            : std::string(form) == "scale"     ? detail::show(p.scale)
                            : std::string(form) == "positions" ? std::string("real")
                                                               : std::string("set");
  fail(form,
       "variant " + variant.name() +
           " computes the unflipped, unshifted, unscaled table of an even dim at integer positions only "
           "(its contract reads none of the table's forms), got " +
           std::string(form) + std::string(" ") + given);
}

// A float32 angle (Contract::angle_type) rounds t and scale relatively only where each is 0 or a normal
// float32 magnitude: below, fl() loses relative accuracy; above, it is infinite.
bool float_angle_domain(double v) noexcept {
  const double a = std::fabs(v);
  return a == 0 || (a >= static_cast<double>(std::numeric_limits<float>::min()) &&
                    a <= static_cast<double>(std::numeric_limits<float>::max()));
}

void check_scale(const Variant& variant, const SinusoidalPlan& plan) {
  if (variant.contract().angle_type == DType::F32 && !float_angle_domain(plan.scale())) {
    fail("scale", "variant " + variant.name() +
                      " forms its angle in float32: scale must be a normal float32 " + "magnitude, got " +
                      detail::show(plan.scale()));
  }
}

// Every scale·p within 2^53 (positions are checked first).
void check_scaled_positions(const SinusoidalPlan& plan, std::span<const std::int64_t> positions) {
  const double scale = plan.scale();
  if (scale == 1.0) return;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (std::fabs(scale * static_cast<double>(positions[i])) > 0x1p53) {
      std::string message = std::string("scale·positions[");
      message += std::to_string(i);
      message += "] must be within 2^53, got " + detail::show(scale) + "·" + std::to_string(positions[i]);
      fail("scale", message);
    }
  }
}

// Real positions: finite, |t| and |scale·t| within 2^53, a float32 angle's t a normal float32 magnitude.
void check_real_positions(const Variant& variant, const SinusoidalPlan& plan,
                          std::span<const double> positions) {
  const bool float_angle = variant.contract().angle_type == DType::F32;
  const auto at = [](std::size_t i) {  // built only for a message
    std::string s = std::string("positions[");
    s += std::to_string(i);
    s += ']';
    return s;
  };
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const double t = positions[i];
    if (!std::isfinite(t) || std::fabs(t) > 0x1p53) {
      fail("positions", at(i) + " must be finite and within 2^53, got " + detail::show(t));
    }
    if (std::fabs(plan.scale() * t) > 0x1p53) {
      fail("scale", "scale·" + at(i) + " must be within 2^53, got " + detail::show(plan.scale()) + "·" +
                        detail::show(t));
    }
    if (float_angle && !float_angle_domain(t)) {
      fail("positions", "variant " + variant.name() + " forms its angle in float32: " + at(i) +
                            " must be 0 or a normal float32 magnitude, got " + detail::show(t));
    }
  }
}

void check_table_call(const Variant& variant, const SinusoidalPlan& plan, DType dtype,
                      const char* buffer_name, bool real_positions) {
  check_variant(variant, Family::Sinusoidal, plan.layout(), dtype, buffer_name);
  check_forms(variant, plan, real_positions);
  check_scale(variant, plan);
}

void table_checked(const Variant& variant, const SinusoidalPlan& plan,
                   std::span<const std::int64_t> positions, Buffer out, ThreadPool* pool) {
  check_table_call(variant, plan, out.dtype, "out", false);
  check_positions(positions);
  check_scaled_positions(plan, positions);
  const std::size_t n = checked_product({positions.size(), plan.dim()}, "out");
  check_buffer(out, n, "out", "n_positions x dim");
  run_table(variant, plan, positions, out, {}, false, pool);
}

void add_checked(const Variant& variant, const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
                 Buffer embeddings, std::span<const std::uint8_t> padding, ThreadPool* pool) {
  check_table_call(variant, plan, embeddings.dtype, "embeddings", false);
  check_positions(positions);
  check_scaled_positions(plan, positions);
  const std::size_t n = checked_product({positions.size(), plan.dim()}, "embeddings");
  check_buffer(embeddings, n, "embeddings", "n_positions x dim");
  if (!padding.empty() && padding.size() != positions.size()) {
    fail("padding", "padding.size must be 0 or n_positions = " + std::to_string(positions.size()) + ", got " +
                        std::to_string(padding.size()));
  }
  run_table(variant, plan, positions, embeddings, padding, true, pool);
}

// Rows at real positions are computed from their position alone (no variant advances them): any cut gives
// the whole call's bits, so the pool's pieces are even row ranges.
struct TableAtTask {
  const SinusoidalVariant* variant;
  const SinusoidalPlan* plan;
  std::span<const double> positions;
  Buffer out;
  std::size_t parts;

  static void run(void* self, std::size_t i) {
    const auto& t = *static_cast<const TableAtTask*>(self);
    const std::size_t n = t.positions.size(), r0 = i * n / t.parts, r1 = (i + 1) * n / t.parts;
    const detail::WholeCallBytes whole(t.out.size * size_of(t.out.dtype));
    t.variant->table_at(*t.plan, t.positions.subspan(r0, r1 - r0),
                        slice(t.out, r0 * t.plan->dim(), (r1 - r0) * t.plan->dim()));
  }
};

void run_table_at(const SinusoidalVariant& v, const SinusoidalPlan& plan, std::span<const double> positions,
                  Buffer out, ThreadPool* pool) {
  const std::size_t parts = pool == nullptr ? 1 : tasks_for(*pool, positions.size(), out.size);
  if (parts <= 1) return v.table_at(plan, positions, out);
  TableAtTask task{&v, &plan, positions, out, parts};
  pool->run(parts, &TableAtTask::run, &task);
}

void table_at_checked(const Variant& variant, const SinusoidalPlan& plan, std::span<const double> positions,
                      Buffer out, ThreadPool* pool) {
  check_table_call(variant, plan, out.dtype, "out", true);
  check_real_positions(variant, plan, positions);
  const std::size_t n = checked_product({positions.size(), plan.dim()}, "out");
  check_buffer(out, n, "out", "n_positions x dim");
  const auto& v = static_cast<const SinusoidalVariant&>(variant);
  if (!detail::guard_applies(variant)) return run_table_at(v, plan, positions, out, pool);
  detail::guarded_rows(variant, positions.size(), plan.dim(), {}, out, "table",
                       [&](Buffer guarded) { run_table_at(v, plan, positions, guarded, pool); });
}

}  // namespace

void sinusoidal_table_at(const Variant& variant, const SinusoidalPlan& plan,
                         std::span<const double> positions, Buffer out) {
  table_at_checked(variant, plan, positions, out, nullptr);
}

void sinusoidal_table_at(const Variant& variant, const SinusoidalPlan& plan,
                         std::span<const double> positions, Buffer out, ThreadPool& pool) {
  table_at_checked(variant, plan, positions, out, &pool);
}

void sinusoidal_table(const Variant& variant, const SinusoidalPlan& plan,
                      std::span<const std::int64_t> positions, Buffer out) {
  table_checked(variant, plan, positions, out, nullptr);
}

void sinusoidal_table(const Variant& variant, const SinusoidalPlan& plan,
                      std::span<const std::int64_t> positions, Buffer out, ThreadPool& pool) {
  table_checked(variant, plan, positions, out, &pool);
}

void sinusoidal_add(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, Buffer embeddings,
                    std::span<const std::uint8_t> padding) {
  add_checked(variant, plan, positions, embeddings, padding, nullptr);
}

void sinusoidal_add(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, Buffer embeddings,
                    std::span<const std::uint8_t> padding, ThreadPool& pool) {
  add_checked(variant, plan, positions, embeddings, padding, &pool);
}

namespace {

void rope_tokens_first(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                       std::int64_t n_heads, Buffer x, RopeDirection direction, ThreadPool* pool) {
  check_variant(variant, Family::Rope, plan.layout(), x.dtype, "x");
  if (n_heads <= 0) fail("n_heads", "n_heads must be positive, got " + std::to_string(n_heads));
  check_axes(plan, positions);
  check_positions(positions);
  const auto heads = static_cast<std::size_t>(n_heads);
  const std::size_t n = checked_product({positions.size() / plan.n_axes(), heads, plan.head_dim()}, "x");
  check_buffer(x, n, "x", "n_tokens x n_heads x head_dim");
  RopeBatch batch = RopeBatch::tokens_first(positions, heads, plan.head_dim());
  batch.n_axes = plan.n_axes();
  run_rope(variant, plan, batch, direction, x, pool);
}

void rope_batch(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                RopeDirection direction, ThreadPool* pool) {
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
  run_rope(variant, plan, batch, direction, x, pool);
}

}  // namespace

void rope_apply(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                std::int64_t n_heads, Buffer x, RopeDirection direction) {
  rope_tokens_first(variant, plan, positions, n_heads, x, direction, nullptr);
}

void rope_apply(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                std::int64_t n_heads, Buffer x, ThreadPool& pool, RopeDirection direction) {
  rope_tokens_first(variant, plan, positions, n_heads, x, direction, &pool);
}

void rope_apply(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                RopeDirection direction) {
  rope_batch(variant, plan, batch, x, direction, nullptr);
}

void rope_apply(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                ThreadPool& pool, RopeDirection direction) {
  rope_batch(variant, plan, batch, x, direction, &pool);
}

void alibi_slopes(const Variant& variant, const AlibiPlan& plan, Buffer out) {
  check_variant(variant, Family::Alibi, plan.params().layout, out.dtype, "out");
  check_buffer(out, plan.n_heads(), "out", "n_heads");
  const auto& v = static_cast<const AlibiVariant&>(variant);
  if (!detail::guard_applies(variant)) return v.slopes(plan, out);
  detail::guarded_rows(variant, 1, plan.n_heads(), {}, out, "slopes", [&](Buffer g) { v.slopes(plan, g); });
}

void alibi_bias(const Variant& variant, const AlibiPlan& plan, std::span<const std::int64_t> queries,
                std::span<const std::int64_t> keys, Buffer out) {
  check_variant(variant, Family::Alibi, plan.params().layout, out.dtype, "out");
  check_positions(queries, "queries");
  check_positions(keys, "keys");
  const std::size_t n = checked_product({plan.n_heads(), queries.size(), keys.size()}, "out");
  check_buffer(out, n, "out", "n_heads x n_queries x n_keys");
  const auto& v = static_cast<const AlibiVariant&>(variant);
  if (!detail::guard_applies(variant)) return v.bias(plan, queries, keys, out);
  detail::guarded_rows(variant, plan.n_heads() * queries.size(), keys.size(), {}, out, "bias",
                       [&](Buffer g) { v.bias(plan, queries, keys, g); });
}

}  // namespace pe
