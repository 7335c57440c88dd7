#include "alloc_counter.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace pe::bench {
namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::int64_t> g_allocations{0};
std::atomic<std::int64_t> g_live{0};
std::atomic<std::int64_t> g_peak{0};
thread_local int t_uncounted = 0;

void on_alloc(void* p) noexcept {
  if (p == nullptr || !g_counting.load(std::memory_order_relaxed) || t_uncounted > 0) return;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const auto size = static_cast<std::int64_t>(malloc_usable_size(p));
  const std::int64_t live = g_live.fetch_add(size, std::memory_order_relaxed) + size;
  std::int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void on_free(void* p) noexcept {
  if (p == nullptr || !g_counting.load(std::memory_order_relaxed) || t_uncounted > 0) return;
  g_live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
}

void* counted_new(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  on_alloc(p);
  return p;
}

void* counted_new_aligned(std::size_t size, std::align_val_t align) {
  const auto a = static_cast<std::size_t>(align);
  void* p = std::aligned_alloc(a, (size + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  on_alloc(p);
  return p;
}

void counted_delete(void* p) noexcept {
  on_free(p);
  std::free(p);
}

}  // namespace

bool counting() noexcept { return g_counting.load(); }

void start_counting() noexcept {
  g_allocations = 0;
  g_live = 0;
  g_peak = 0;
  g_counting = true;
}

AllocStats stop_counting() noexcept {
  g_counting = false;
  return {g_allocations.load(), g_peak.load()};
}

Uncounted::Uncounted() noexcept { ++t_uncounted; }
Uncounted::~Uncounted() { --t_uncounted; }

}  // namespace pe::bench

// The replacements every allocation of the process goes through.
void* operator new(std::size_t size) { return pe::bench::counted_new(size); }
void* operator new[](std::size_t size) { return pe::bench::counted_new(size); }
void* operator new(std::size_t size, std::align_val_t a) { return pe::bench::counted_new_aligned(size, a); }
void* operator new[](std::size_t size, std::align_val_t a) { return pe::bench::counted_new_aligned(size, a); }
void operator delete(void* p) noexcept { pe::bench::counted_delete(p); }
void operator delete[](void* p) noexcept { pe::bench::counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { pe::bench::counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { pe::bench::counted_delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { pe::bench::counted_delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { pe::bench::counted_delete(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { pe::bench::counted_delete(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { pe::bench::counted_delete(p); }
