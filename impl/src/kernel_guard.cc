// Guard zones (pe/kernel_guard.h): the guarded copy, its check, and where a stray write landed.
#include "pe/kernel_guard.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "detail/guarded_call.h"
#include "pe/errors.h"

namespace pe {
namespace {
thread_local KernelGuard t_mode = KernelGuard::Outside;
thread_local GuardLayout t_layout = GuardLayout::Alternate;
}  // namespace

KernelGuard kernel_guard() noexcept { return t_mode; }
GuardLayout guard_layout() noexcept { return t_layout; }
ScopedKernelGuard::ScopedKernelGuard(KernelGuard mode, GuardLayout layout) noexcept
    : previous_mode_(t_mode), previous_layout_(t_layout) {
  t_mode = mode;
  t_layout = layout;
}
ScopedKernelGuard::~ScopedKernelGuard() {
  t_mode = previous_mode_;
  t_layout = previous_layout_;
}

namespace detail {
namespace {

// Rows keep the alignment they have in a contiguous buffer: every gap and zone is a multiple of this.
constexpr std::size_t kAlign = 64;
// A copy this large also gets a protected page at each end: a write past its zones faults at once.
constexpr std::size_t kPagedFrom = std::size_t{64} << 10;

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

// Finite, so that a kernel rotating a gap by a nonzero angle changes its bits (a NaN would propagate
// unchanged), and unlike the values the properties draw.
void fill_canaries(std::byte* p, std::size_t n, DType t) {
  const auto fill = [&](auto bits) {
    for (std::size_t i = 0; i < n; ++i) std::memcpy(p + i * sizeof bits, &bits, sizeof bits);
  };
  switch (t) {
    case DType::F64:
      return fill(std::uint64_t{0x416B4B4B4B4B4B4B});
    case DType::F32:
      return fill(std::uint32_t{0x4B5A5A5A});
    case DType::BF16:
      return fill(std::uint16_t{0x4B5A});
    case DType::F16:
      return fill(std::uint16_t{0x6A5A});
  }
}

// `front` canary elements, the data's `extent`, at least `back` canary elements after; the front is
// rounded up to the alignment, the back to the allocation's end.
class Region {
 public:
  Region(std::size_t front, std::size_t extent, std::size_t back, DType dtype) : es_(size_of(dtype)) {
    front_ = round_up(front * es_, kAlign) / es_;
    std::size_t bytes = round_up((front_ + extent + back) * es_, kAlign);
    if (bytes >= kPagedFrom) {
      const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
      bytes = round_up(bytes, page);
      void* m = mmap(nullptr, bytes + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m != MAP_FAILED) {
        map_ = static_cast<std::byte*>(m);
        map_bytes_ = bytes + 2 * page;
        mprotect(map_, page, PROT_NONE);
        mprotect(map_ + page + bytes, page, PROT_NONE);
        base_ = map_ + page;
      }
    }
    if (base_ == nullptr) {
      heap_ = static_cast<std::byte*>(std::aligned_alloc(kAlign, bytes));
      if (heap_ == nullptr) throw std::bad_alloc();
      base_ = heap_;
    }
    total_ = bytes / es_;
    fill_canaries(base_, total_, dtype);
  }
  ~Region() {
    if (map_ != nullptr) munmap(map_, map_bytes_);
    std::free(heap_);
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  // Element i of the data (negative: the front zone).
  std::byte* at(std::ptrdiff_t i) const { return base_ + (static_cast<std::ptrdiff_t>(front_) + i) * es_; }
  std::ptrdiff_t first() const { return -static_cast<std::ptrdiff_t>(front_); }
  std::ptrdiff_t end() const { return static_cast<std::ptrdiff_t>(total_ - front_); }
  std::size_t element_size() const { return es_; }
  std::vector<std::byte> snapshot() const { return {base_, base_ + total_ * es_}; }

 private:
  std::size_t es_, front_ = 0, total_ = 0, map_bytes_ = 0;
  std::byte *base_ = nullptr, *map_ = nullptr, *heap_ = nullptr;
};

// A changed element's place: which row it belongs to and its channel relative to that row's start.
struct Place {
  int kind = 0;  // the geometry's own kinds
  std::size_t row = 0;
  std::ptrdiff_t channel = 0;
  int gap = 0;  // the geometry's own detail (which gap)
  bool operator==(const Place&) const = default;
};

struct Geometry {
  virtual ~Geometry() = default;
  virtual Place locate(std::ptrdiff_t i) const = 0;
  virtual std::string describe(const Place& first, const Place& last, std::size_t count) const = 0;
};

std::string elements(std::size_t n) { return fmt::format("{} element{}", n, n == 1 ? "" : "s"); }
std::string channels(std::ptrdiff_t a, std::ptrdiff_t b) {
  return a == b ? fmt::format("channel {}", a) : fmt::format("channels {}\u2013{}", a, b);
}

// Compares everything outside `writable` (sorted, disjoint [begin, end) in data elements) with `before`;
// throws KernelFault describing the first run of changed elements and counting the rest.
void check_outside(const Variant& variant, const Region& r, const std::vector<std::byte>& before,
                   const std::vector<std::pair<std::size_t, std::size_t>>& writable, const Geometry& g) {
  const std::size_t es = r.element_size();
  const std::byte* const origin = before.data() + (0 - r.first()) * static_cast<std::ptrdiff_t>(es);
  std::vector<std::ptrdiff_t> changed;
  std::size_t count = 0;
  const auto scan = [&](std::ptrdiff_t a, std::ptrdiff_t b) {
    if (a >= b || std::memcmp(r.at(a), origin + a * static_cast<std::ptrdiff_t>(es), (b - a) * es) == 0)
      return;
    for (std::ptrdiff_t i = a; i < b; ++i) {
      if (std::memcmp(r.at(i), origin + i * static_cast<std::ptrdiff_t>(es), es) == 0) continue;
      ++count;
      if (changed.size() < 4096) changed.push_back(i);
    }
  };
  std::ptrdiff_t from = r.first();
  for (const auto& [b, e] : writable) {
    scan(from, static_cast<std::ptrdiff_t>(b));
    from = static_cast<std::ptrdiff_t>(e);
  }
  scan(from, r.end());
  if (count == 0) return;
  // Runs of one place: consecutive channels of one row and kind.
  std::size_t places = 0, first_run = 0;
  Place first{}, last{}, previous{};
  for (std::size_t k = 0; k < changed.size(); ++k) {
    const Place p = g.locate(changed[k]);
    const bool continues = k > 0 && p.kind == previous.kind && p.row == previous.row &&
                           p.gap == previous.gap && p.channel == previous.channel + 1;
    if (!continues) ++places;
    if (places == 1) {
      if (k == 0) first = p;
      last = p;
      ++first_run;
    }
    previous = p;
  }
  std::string where = g.describe(first, last, first_run);
  if (count > first_run) {
    const bool all_seen = count == changed.size();
    const std::size_t more = count - first_run;
    where += fmt::format("; {} more element{} outside the rows", more, more == 1 ? "" : "s");
    if (places > 1) {  // else one run longer than the elements listed
      where += fmt::format(", in {}{} more place{}", places - 1, all_seen ? "" : "+", places == 2 ? "" : "s");
    }
  }
  throw KernelFault(variant.name(), where);
}

// The guarded RoPE layout: the caller's row order (heads inside tokens or tokens inside heads), every row
// followed by a gap longer than a row, one more gap between the outer axis's groups.
struct RopeGeometry : Geometry {
  enum Kind { kBeforeBuffer, kPastRow, kBeforeRow, kPassThrough };
  enum Gap { kInnerGap, kOuterGap, kEnd };
  std::size_t hd, ro, rd, gap, inner_count, outer_count, inner_stride, outer_stride, extent;
  bool heads_inner;

  std::size_t start(std::size_t o, std::size_t i) const { return o * outer_stride + i * inner_stride; }
  std::string row_name(std::size_t row) const {
    const std::size_t o = row / inner_count, i = row % inner_count;
    return heads_inner ? fmt::format("row (token {}, head {})", o, i)
                       : fmt::format("row (token {}, head {})", i, o);
  }
  std::string plan_words() const {
    return fmt::format("of a {}-channel row (rotary_offset {}, rotary_dim {})", hd, ro, rd);
  }
  std::string gap_words(std::size_t row, int which) const {
    const std::size_t o = row / inner_count, i = row % inner_count;
    const char *inner = heads_inner ? "heads" : "tokens", *outer = heads_inner ? "token" : "head";
    const char* outers = heads_inner ? "tokens" : "heads";
    if (which == kEnd) return "the last row in memory";
    if (which == kInnerGap)
      return fmt::format("in the gap between {} {} and {} of {} {}", inner, i, i + 1, outer, o);
    return fmt::format("in the gap between {} {} and {}", outers, o, o + 1);
  }

  Place locate(std::ptrdiff_t d) const override {
    const std::size_t last = outer_count * inner_count - 1;
    if (d < 0) return {kBeforeBuffer, 0, d, 0};
    const auto u = static_cast<std::size_t>(d);
    if (u >= extent) {
      const std::size_t s = start(outer_count - 1, inner_count - 1);
      return {kPastRow, last, static_cast<std::ptrdiff_t>(u - s), kEnd};
    }
    const std::size_t o = u / outer_stride, r = u % outer_stride;
    const std::size_t i = std::min(r / inner_stride, inner_count - 1), c = r - i * inner_stride;
    const std::size_t row = o * inner_count + i;
    if (c < hd) return {kPassThrough, row, static_cast<std::ptrdiff_t>(c), 0};
    const bool inner_next = i + 1 < inner_count;
    const std::size_t next_start = inner_next ? start(o, i + 1) : start(o + 1, 0);
    const std::size_t length = next_start - (start(o, i) + hd), k = c - hd;
    const int which = inner_next ? kInnerGap : kOuterGap;
    if (k < length - k) return {kPastRow, row, static_cast<std::ptrdiff_t>(c), which};
    return {kBeforeRow, row + 1, -static_cast<std::ptrdiff_t>(length - k), which};
  }
  std::string describe(const Place& a, const Place& b, std::size_t n) const override {
    switch (a.kind) {
      case kBeforeBuffer:
        return fmt::format("{} before the buffer: {} before {}, the first in memory, {}", elements(n),
                           channels(a.channel, b.channel), row_name(0), plan_words());
      case kPastRow:
        return fmt::format("{} past {}, {}: {} {}", elements(n), row_name(a.row), gap_words(a.row, a.gap),
                           channels(a.channel, b.channel), plan_words());
      case kBeforeRow:
        return fmt::format("{} before {}, {}: {} {}", elements(n), row_name(a.row),
                           gap_words(a.row - 1, a.gap), channels(a.channel, b.channel), plan_words());
      default:
        return fmt::format(
            "{} into pass-through {} of {}: a {}-channel row whose rotated channels are {}\u2013{} "
            "(rotary_offset {}, rotary_dim {})",
            elements(n), channels(a.channel, b.channel), row_name(a.row), hd, ro, ro + rd - 1, ro, rd);
    }
  }
};

// Contiguous rows of `dim` (a table, embeddings, a bias): zones before and after, padding rows kept.
struct RowsGeometry : Geometry {
  enum Kind { kBefore, kPast, kPadding };
  std::size_t rows, dim;
  const char* what;
  Place locate(std::ptrdiff_t d) const override {
    if (d < 0) return {kBefore, 0, d, 0};
    const auto u = static_cast<std::size_t>(d);
    if (u >= rows * dim) return {kPast, rows - 1, static_cast<std::ptrdiff_t>(u - (rows - 1) * dim), 0};
    return {kPadding, u / dim, static_cast<std::ptrdiff_t>(u % dim), 0};
  }
  std::string describe(const Place& a, const Place& b, std::size_t n) const override {
    switch (a.kind) {
      case kBefore:
        return fmt::format("{} before the {}: {} before row 0 ({} rows of {})", elements(n), what,
                           channels(a.channel, b.channel), rows, dim);
      case kPast:
        return fmt::format("{} past the {}'s end: {} of its last row {} ({} rows of {})", elements(n), what,
                           channels(a.channel, b.channel), a.row, rows, dim);
      default:
        return fmt::format("{} into padding row {} of the {} (its padding flag is set): {}", elements(n),
                           a.row, what, channels(a.channel, b.channel));
    }
  }
};

}  // namespace

bool guard_applies(const Variant& variant) noexcept {
  return t_mode == KernelGuard::All || (t_mode == KernelGuard::Outside && !is_builtin(variant));
}

void guarded_rope(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                  const std::function<void(const RopeBatch&, Buffer)>& call) {
  const std::size_t tokens = batch.tokens(), heads = batch.heads, es = size_of(x.dtype);
  if (tokens == 0 || heads == 0) return call(batch, x);
  RopeGeometry g;
  g.hd = plan.head_dim();
  g.ro = plan.rotary_offset();
  g.rd = plan.rotary_dim();
  g.heads_inner = !(heads == 1 || (tokens > 1 && batch.token_stride < batch.head_stride));
  g.inner_count = g.heads_inner ? heads : tokens;
  g.outer_count = g.heads_inner ? tokens : heads;
  g.gap = round_up(g.hd * es + kAlign, kAlign) / es;
  const bool gapped =
      t_layout == GuardLayout::Gapped ||
      (t_layout == GuardLayout::Alternate &&
       ((tokens + heads + g.hd / 2 + static_cast<std::uint64_t>(batch.positions[0])) & 1) == 0);
  std::size_t size = 0;  // of the buffer the kernel gets
  if (gapped) {
    g.inner_stride = g.hd + g.gap;
    g.outer_stride = g.inner_count * g.inner_stride + g.gap;
    g.extent = g.start(g.outer_count - 1, g.inner_count - 1) + g.hd;
    size = g.extent;
  } else {  // the caller's strides; a stride of an axis of one is never stepped, any nonzero one will do
    g.inner_stride = g.inner_count == 1 ? g.hd : (g.heads_inner ? batch.head_stride : batch.token_stride);
    g.outer_stride = g.heads_inner ? batch.token_stride : batch.head_stride;
    g.extent = (g.outer_count - 1) * g.outer_stride + (g.inner_count - 1) * g.inner_stride + g.hd;
    if (g.outer_count == 1) g.outer_stride = g.extent;
    size = x.size;
  }
  Region region(g.gap, size, g.gap, x.dtype);

  RopeBatch guarded = batch;
  (g.heads_inner ? guarded.head_stride : guarded.token_stride) = g.inner_stride;
  (g.heads_inner ? guarded.token_stride : guarded.head_stride) = g.outer_stride;
  if (!gapped) {  // the caller's whole buffer: its own gaps and whatever lies past the rows stay as they are
    std::memcpy(region.at(0), x.data, x.size * es);
    guarded.head_stride = batch.head_stride;
    guarded.token_stride = batch.token_stride;
  }
  const auto caller = [&](std::size_t t, std::size_t h) {
    return static_cast<std::byte*>(x.data) + batch.row(t, h) * es;
  };
  std::vector<std::pair<std::size_t, std::size_t>> writable;
  writable.reserve(tokens * heads);
  for (std::size_t o = 0; o < g.outer_count; ++o) {
    for (std::size_t i = 0; i < g.inner_count; ++i) {
      const std::size_t t = g.heads_inner ? o : i, h = g.heads_inner ? i : o, s = g.start(o, i);
      if (gapped) std::memcpy(region.at(static_cast<std::ptrdiff_t>(s)), caller(t, h), g.hd * es);
      writable.emplace_back(s + g.ro, s + g.ro + g.rd);
    }
  }
  const std::vector<std::byte> before = region.snapshot();
  call(guarded, Buffer{region.at(0), size, x.dtype});
  check_outside(variant, region, before, writable, g);
  for (std::size_t o = 0; o < g.outer_count; ++o) {
    for (std::size_t i = 0; i < g.inner_count; ++i) {
      const std::size_t t = g.heads_inner ? o : i, h = g.heads_inner ? i : o, s = g.start(o, i);
      std::memcpy(caller(t, h) + g.ro * es, region.at(static_cast<std::ptrdiff_t>(s + g.ro)), g.rd * es);
    }
  }
}

void guarded_rows(const Variant& variant, std::size_t rows, std::size_t dim,
                  std::span<const std::uint8_t> padding, Buffer data, const char* what,
                  const std::function<void(Buffer)>& call) {
  const std::size_t es = size_of(data.dtype), n = rows * dim;
  if (n == 0) {
    call(data);
    return;
  }
  const std::size_t zone = round_up(dim * es + kAlign, kAlign) / es;
  Region region(zone, n, zone, data.dtype);
  std::memcpy(region.at(0), data.data, n * es);
  std::vector<std::pair<std::size_t, std::size_t>> writable;
  for (std::size_t r = 0; r < rows; ++r) {
    if (!padding.empty() && padding[r] != 0) continue;
    if (!writable.empty() && writable.back().second == r * dim) {
      writable.back().second += dim;
    } else {
      writable.emplace_back(r * dim, (r + 1) * dim);
    }
  }
  const std::vector<std::byte> before = region.snapshot();
  call(Buffer{region.at(0), n, data.dtype});
  RowsGeometry g;
  g.rows = rows;
  g.dim = dim;
  g.what = what;
  check_outside(variant, region, before, writable, g);
  for (const auto& [b, e] : writable) {
    std::memcpy(static_cast<std::byte*>(data.data) + b * es, region.at(static_cast<std::ptrdiff_t>(b)),
                (e - b) * es);
  }
}

}  // namespace detail
}  // namespace pe
