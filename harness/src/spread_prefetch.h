// Lines asked for from memory a few at a time over a pass's groups of vectors, not all at once: the screens'
// rows ahead (sinusoidal_screen.cc's table, rope_screen.cc's x and y). All of a row's lines at its start
// filled the miss buffers, and the pipeline waited on them (a fifth to a quarter of the table kernel's
// samples on the instruction after the prefetches, whichever cache they filled).
#pragma once

#include <algorithm>
#include <cstddef>

namespace pe::harness::detail {

struct SpreadPrefetch {
  // The bytes each group() asks for, for `bytes` over `groups` calls (a division: taken once a kernel call,
  // not once a row).
  static std::size_t per_group(std::size_t bytes, std::size_t groups) {
    return (bytes / 64 + groups - 1) / groups * 64;
  }
  SpreadPrefetch() = default;
  // [0, bytes) of `a`, and of `b` at the same offsets where it is not null, `per_group` bytes a group()
  // (per_group() above), the rest at rest(); into L2 where `outer` (else L1).
  SpreadPrefetch(const char* a, const char* b, std::size_t bytes, std::size_t per_group, bool outer)
      : at_{a, b}, bytes_(bytes), per_group_(per_group), outer_(outer) {}
  void group() { ask(std::min(bytes_, done_ + per_group_)); }
  void rest() { ask(bytes_); }

 private:
  void ask(std::size_t to) {
    for (; done_ < to; done_ += 64)  // offsets, not pointers: nothing formed past the range
      for (const char* p : at_)
        if (p != nullptr) outer_ ? __builtin_prefetch(p + done_, 0, 1) : __builtin_prefetch(p + done_, 0, 3);
  }
  const char* at_[2] = {nullptr, nullptr};
  std::size_t bytes_ = 0, per_group_ = 0, done_ = 0;
  bool outer_ = false;
};

}  // namespace pe::harness::detail
