// Google Benchmark calls a benchmark's function once per iteration-count estimate, once per
// repetition and once more for the memory run: a dozen calls per benchmark in report mode.
// Building the buffers (first touch of fresh pages) and checking the output against MPFR on every
// call cost more than the timing itself, so a benchmark builds its fixture on the first call and
// keeps it until another benchmark asks for the slot. One slot: large buffers never pile up.
#pragma once

#include <cstddef>
#include <memory>

#include "alloc_counter.h"

namespace pe::bench {

// A key no other registered benchmark has (registration is single-threaded).
inline std::size_t next_fixture_key() noexcept {
  static std::size_t last = 0;
  return ++last;
}

struct FixtureSlot {
  std::size_t key = 0;  // 0: empty
  std::shared_ptr<void> fixture;
};
inline FixtureSlot& fixture_slot() noexcept {
  static FixtureSlot slot;
  return slot;
}

// The fixture for `key`, built by make() (returning F) when the slot holds another one. Building
// and releasing are never charged to the measured call's heap counters.
template <class F, class Make>
F& cached_fixture(std::size_t key, Make&& make) {
  FixtureSlot& slot = fixture_slot();
  if (slot.key != key) {
    Uncounted setup;
    slot.fixture.reset();  // free the previous benchmark's buffers before allocating ours
    slot.key = 0;
    slot.fixture = std::make_shared<F>(make());
    slot.key = key;
  }
  return *static_cast<F*>(slot.fixture.get());
}

}  // namespace pe::bench
