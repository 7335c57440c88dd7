#include "read_counters.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace pe::bench {
namespace {

TEST(ReadWindow, NoLimitBeforeAPass) {
  const std::vector<std::byte> a(4096);
  const ReadWindow w({a});
  EXPECT_EQ(w.bytes(), 4096u);
  EXPECT_EQ(w.passes(), 0u);
  EXPECT_EQ(w.bytes_per_second(), 0.0);
}

TEST(ReadWindow, ReadsEveryBufferEachPass) {
  const std::vector<std::byte> a(std::size_t{48} << 20), b(std::size_t{16} << 20);
  ReadWindow w({a, b});
  EXPECT_EQ(w.bytes(), std::size_t{64} << 20);
  w.time_pass();
  w.time_pass();
  // 64 MiB take far longer than the 20 µs a pass is repeated to: one pass each time.
  EXPECT_EQ(w.passes(), 2u);
  EXPECT_GT(w.bytes_per_second(), 0.0);
}

TEST(ReadWindow, RepeatsAPassShorterThanTheClock) {
  const std::vector<std::byte> a(64);
  ReadWindow w({a});
  w.time_pass();
  // 64 bytes load in nanoseconds: the passes are doubled until they take 20 µs together, and so many counted.
  EXPECT_GT(w.passes(), 1u);
  EXPECT_GE(w.seconds(), 20e-6);
  EXPECT_GT(w.bytes_per_second(), 0.0);
}

TEST(ReadWindow, OnePassOfALargeBuffer) {
  const std::vector<std::byte> a(std::size_t{64} << 20);
  ReadWindow w({a});
  w.time_pass();
  EXPECT_EQ(w.passes(), 1u);
  EXPECT_GE(w.seconds(), 20e-6);
}

}  // namespace
}  // namespace pe::bench
