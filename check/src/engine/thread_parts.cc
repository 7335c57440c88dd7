#include "engine/thread_parts.h"

#include <exception>
#include <thread>
#include <vector>

#include "pe/ref/mpfr_thread_cache.h"

namespace pe::check {

void in_parts(std::size_t n, const std::function<void(std::size_t)>& part) {
  std::vector<std::exception_ptr> failed(n);
  const auto run = [&](std::size_t k) {
    try {
      part(k);
    } catch (...) {
      failed[k] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  std::exception_ptr unstarted;
  try {
    if (n > 1) workers.reserve(n - 1);
    for (std::size_t k = 1; k < n; ++k)
      workers.emplace_back([&run, k] {
        const ref::MpfrThreadCache cache;  // the worker ends with this check
        run(k);
      });
  } catch (...) {  // a thread that could not start: those that did are joined below
    unstarted = std::current_exception();
  }
  ref::free_mpfr_cache_at_thread_exit();
  if (!unstarted && n > 0) run(0);
  for (std::thread& w : workers) w.join();
  if (unstarted) std::rethrow_exception(unstarted);
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace pe::check
