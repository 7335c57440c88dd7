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

}  // namespace pe::ref
