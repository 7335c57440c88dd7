// The size of the whole call a kernel invocation belongs to, for the streaming decision
// (pe/streaming.h): a call split over a pool (pe/api.cc) hands each thread a slice, but whether the
// output outgrows the caches is the whole call's property. 0: the invocation is the whole call.
#pragma once

#include <cstddef>

namespace pe::detail {

inline thread_local std::size_t whole_call_bytes = 0;

// While alive, kernels on this thread take `bytes` as their call's output size.
class WholeCallBytes {
 public:
  explicit WholeCallBytes(std::size_t bytes) noexcept : was_(whole_call_bytes) { whole_call_bytes = bytes; }
  ~WholeCallBytes() { whole_call_bytes = was_; }
  WholeCallBytes(const WholeCallBytes&) = delete;
  WholeCallBytes& operator=(const WholeCallBytes&) = delete;

 private:
  std::size_t was_;
};

// Whether an output of `bytes` (this invocation's) is to be streamed.
bool stream_output(std::size_t bytes) noexcept;

}  // namespace pe::detail
