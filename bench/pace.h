// The machine's pace: the time of one fixed arithmetic workload, measured right before and right
// after each benchmark's timed loop and reported with it (counter `pace_ns`). This machine is a
// shared virtual machine whose speed steps by up to 1.6x for tens of milliseconds to seconds at a
// time (docs/speed.md): two runs of the same build then differ "significantly" benchmark by
// benchmark. `compare` divides each repetition's time by its own pace, so that a slowdown the
// whole machine shared is not charged to the build.
#pragma once

namespace pe::bench {

// Median of three timings of the workload, in ns (about 10 us each here). The workload is the same
// code in every build (pace.cc is compiled with fixed options, bench/CMakeLists.txt): a regression is
// measured against it.
double pace_ns();

}  // namespace pe::bench
