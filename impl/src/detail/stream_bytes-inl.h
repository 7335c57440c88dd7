// Copying a staged piece of output (in L1) to its place with streaming stores: the vector-aligned
// middle by Highway `Stream`, the unaligned ends by normal stores. The caller fences once at the end
// of the call (hwy::FlushStream) so that later loads see the data.
//
// Per-target code: included once per target through foreach_target.h (the toggling guard below).
#if defined(PE_DETAIL_STREAM_BYTES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PE_DETAIL_STREAM_BYTES_INL_H_
#undef PE_DETAIL_STREAM_BYTES_INL_H_
#else
#define PE_DETAIL_STREAM_BYTES_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace pe::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_INLINE void StreamBytes(void* HWY_RESTRICT dst, const void* HWY_RESTRICT src, std::size_t bytes) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t n = hn::Lanes(d);
  auto* out = static_cast<std::uint8_t*>(dst);
  const auto* in = static_cast<const std::uint8_t*>(src);
  const std::size_t misalign = reinterpret_cast<std::uintptr_t>(out) % n;
  std::size_t i = misalign == 0 ? 0 : n - misalign;
  if (i > bytes) i = bytes;
  std::memcpy(out, in, i);
  for (; i + n <= bytes; i += n) hn::Stream(hn::LoadU(d, in + i), d, out + i);
  std::memcpy(out + i, in + i, bytes - i);
}

}  // namespace pe::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PE_DETAIL_STREAM_BYTES_INL_H_
