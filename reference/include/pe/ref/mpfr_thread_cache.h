// MPFR caches constants per thread (π, log 2, ...); a thread that ends must free its own, else they leak
// with it (LeakSanitizer counts them). One of these on a worker thread's stack frees them as it returns.
#pragma once

#include <mpfr.h>

namespace pe::ref {

struct MpfrThreadCache {
  MpfrThreadCache() = default;
  MpfrThreadCache(const MpfrThreadCache&) = delete;
  MpfrThreadCache& operator=(const MpfrThreadCache&) = delete;
  ~MpfrThreadCache() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
};

// For a thread that runs one check after another (the caller's, Python's): its constants kept from one
// check to the next (recomputing log 2 and π was ~10% of a small check) and freed once, as the thread ends.
inline void free_mpfr_cache_at_thread_exit() {
  thread_local const MpfrThreadCache at_exit;
  (void)at_exit;
}

}  // namespace pe::ref
