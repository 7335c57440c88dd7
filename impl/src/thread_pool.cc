#include "pe/thread_pool.h"

#include <string>

#include "pe/errors.h"

namespace pe {
namespace {

// About 0.1 ms of spinning before a waiter sleeps.
constexpr int kSpins = 4000;

inline void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) throw InvalidArgument("threads", "threads must be at least 1, got 0");
  workers_.reserve(threads - 1);
  for (std::size_t i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    const std::lock_guard lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::take_tasks() noexcept {
  for (std::size_t i = next_.fetch_add(1); i < tasks_; i = next_.fetch_add(1)) task_(context_, i);
}

void ThreadPool::work() noexcept {
  std::uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpins && generation_.load() == seen && !stop_.load(); ++i) pause();
    {
      std::unique_lock lock(m_);
      wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      if (stop_.load()) return;
      seen = generation_.load();
    }
    take_tasks();
    if (busy_workers_.fetch_sub(1) == 1) {
      const std::lock_guard lock(m_);
      finished_.notify_one();
    }
  }
}

void ThreadPool::run(std::size_t tasks, void (*task)(void*, std::size_t), void* context) noexcept {
  if (tasks == 0) return;
  const std::lock_guard serial(run_mutex_);
  if (workers_.empty() || tasks == 1) {
    for (std::size_t i = 0; i < tasks; ++i) task(context, i);
    return;
  }
  // The task is published before the generation moves: a worker that sees the new generation
  // (acquire) sees the task.
  task_ = task, context_ = context, tasks_ = tasks;
  next_.store(0);
  busy_workers_.store(workers_.size());
  {
    const std::lock_guard lock(m_);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  take_tasks();
  for (int i = 0; i < kSpins && busy_workers_.load() != 0; ++i) pause();
  std::unique_lock lock(m_);
  finished_.wait(lock, [&] { return busy_workers_.load() == 0; });
}

}  // namespace pe
