// Threads a caller owns, for the entry points that take one (pe/api.h): created once, outside any timed
// or latency-bound call; a call then splits its rows over the pool's threads without creating a thread
// or allocating. Results are the same bits for any thread count (pieces are cut where the variant's
// contract says a call may be split: pe/contract.h's state_rows).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace pe {

class ThreadPool {
 public:
  // `threads` in all, the calling thread included (threads - 1 workers). Throws InvalidArgument
  // naming "threads" for 0.
  explicit ThreadPool(std::size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t threads() const noexcept { return workers_.size() + 1; }

  // task(context, i) for every i in [0, tasks), on the pool's workers and the calling thread; returns
  // when every one has run. Tasks must not throw. One run at a time per pool (calls from two threads
  // at once are serialised).
  void run(std::size_t tasks, void (*task)(void* context, std::size_t i), void* context) noexcept;

 private:
  void work() noexcept;
  void take_tasks() noexcept;

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one run at a time
  std::mutex m_;
  std::condition_variable wake_, finished_;
  // Waiters spin a little before they sleep: a run that follows soon (a decode loop) finds the
  // workers awake instead of paying a wake-up of tens of microseconds.
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> busy_workers_{0};
  void (*task_)(void*, std::size_t) = nullptr;
  void* context_ = nullptr;
  std::size_t tasks_ = 0;
  std::atomic<std::size_t> next_{0};
};

}  // namespace pe
