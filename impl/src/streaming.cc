#include "pe/streaming.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "detail/streaming_call.h"

namespace pe {
namespace {

constexpr std::size_t kDefault = std::size_t{64} << 20;

// 64 MiB unless $PE_STREAMING_THRESHOLD (bytes) says otherwise: see docs/speed.md for the crossover
// measured on this machine (32 MiB of L3).
std::size_t initial_threshold() {
  if (const char* env = std::getenv("PE_STREAMING_THRESHOLD"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(env, &end, 10);
    if (*end == '\0' && env[0] != '-') return static_cast<std::size_t>(bytes);
    // Read on first use, inside a kernel call: a warning, not an exception from a noexcept function.
    std::fprintf(stderr, "pe-suite: PE_STREAMING_THRESHOLD='%s' is not a byte count; using %zu\n", env,
                 kDefault);
  }
  return kDefault;
}

std::atomic<std::size_t>& threshold() {
  static std::atomic<std::size_t> t{initial_threshold()};
  return t;
}

}  // namespace

namespace detail {
bool stream_output(std::size_t bytes) noexcept {
  return (whole_call_bytes != 0 ? whole_call_bytes : bytes) >= streaming_threshold();
}
}  // namespace detail

std::size_t streaming_threshold() noexcept { return threshold().load(std::memory_order_relaxed); }
void set_streaming_threshold(std::size_t bytes) noexcept {
  threshold().store(bytes, std::memory_order_relaxed);
}

}  // namespace pe
