// Heap accounting for benchmarks: global operator new/delete are replaced (alloc_counter.cc) to
// count allocations and track the peak of live bytes while counting is on (measure_call below, one
// call of a kernel); setup code that allocates on purpose (buffers, a precomputed cache) wraps itself
// in Uncounted so only the hot path is charged.
#pragma once

#include <cstdint>

namespace pe::bench {

struct AllocStats {
  std::int64_t allocations = 0;
  std::int64_t peak_bytes = 0;  // largest live heap bytes above the level at start()
};

// Whether counting is on (inside a measure_call below).
bool counting() noexcept;

// Starts counting from zero; stop() returns what was counted since.
void start_counting() noexcept;
AllocStats stop_counting() noexcept;

// Allocations inside its lifetime are not counted (setup, not the measured call).
class Uncounted {
 public:
  Uncounted() noexcept;
  ~Uncounted();
  Uncounted(const Uncounted&) = delete;
  Uncounted& operator=(const Uncounted&) = delete;
};

// The heap use of one call of f, alone.
template <class F>
AllocStats measure_call(F&& f) {
  start_counting();
  f();
  return stop_counting();
}

}  // namespace pe::bench
