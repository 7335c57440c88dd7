#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "stream_stores.cc"
#include "stream_stores.h"

#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace pe::bench::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// The bytes before the first vector-aligned address of dst, within [0, bytes].
inline std::size_t head_bytes(const void* dst, std::size_t bytes, std::size_t align) {
  const auto at = reinterpret_cast<std::uintptr_t>(dst);
  const std::size_t head = (align - at % align) % align;
  return head < bytes ? head : bytes;
}

void StreamFill(void* dst, std::size_t bytes, unsigned char value) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t n = hn::Lanes(d);
  auto* out = static_cast<std::uint8_t*>(dst);
  const std::size_t head = head_bytes(dst, bytes, n);
  std::memset(out, value, head);
  const auto v = hn::Set(d, value);
  std::size_t i = head;
  for (; i + n <= bytes; i += n) hn::Stream(v, d, out + i);
  std::memset(out + i, value, bytes - i);
  hwy::FlushStream();
}

void StreamCopy(void* dst, const void* src, std::size_t bytes) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t n = hn::Lanes(d);
  auto* out = static_cast<std::uint8_t*>(dst);
  const auto* in = static_cast<const std::uint8_t*>(src);
  const std::size_t head = head_bytes(dst, bytes, n);
  std::memcpy(out, in, head);
  std::size_t i = head;
  for (; i + n <= bytes; i += n) hn::Stream(hn::LoadU(d, in + i), d, out + i);
  std::memcpy(out + i, in + i, bytes - i);
  hwy::FlushStream();
}

}  // namespace pe::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pe::bench {

HWY_EXPORT(StreamFill);
HWY_EXPORT(StreamCopy);

void stream_fill(void* dst, std::size_t bytes, unsigned char value) {
  HWY_DYNAMIC_DISPATCH(StreamFill)(dst, bytes, value);
}

void stream_copy(void* dst, const void* src, std::size_t bytes) {
  HWY_DYNAMIC_DISPATCH(StreamCopy)(dst, src, bytes);
}

}  // namespace pe::bench
#endif  // HWY_ONCE
