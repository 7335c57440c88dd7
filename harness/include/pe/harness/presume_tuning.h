// How a screened pass presumes its tails' floors (Measurement::presume_floors), tuned process-wide per family
// (rope_screen.h, sinusoidal_screen.h; tests force a failure with a share under 1%, benchmarks read the
// reruns): from `presume_from` judged elements on, each band's tails presume the level `presumed_share` of a
// sample's estimates exceed (the share over 1% shrinking with the sample's size: measure.h's
// presumed_share); where the floors did not hold, the pass runs again without them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pe::harness {

struct PresumeTuning {
  std::size_t presume_from = SIZE_MAX;  // each family's default is its own (its tuning's first value)
  double presumed_share = 0.02;
  // The sinusoidal table's pass also presumes each band's largest error from its sample
  // (Measurement::presume_largest, TableSinks::seed).
  bool presume_largest = true;
};

}  // namespace pe::harness
