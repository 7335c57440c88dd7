// Progress of a long sweep on stderr, only when stderr is a terminal: CI logs stay quiet.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace pe::cli {

class Progress {
 public:
  Progress(std::string what, std::size_t total)
      : what_(std::move(what)), total_(total), on_(total > 0 && isatty(STDERR_FILENO) == 1) {}
  ~Progress() {
    if (on_ && shown_) std::fprintf(stderr, "\r\033[K");
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // At most ten updates a second; `item` names what is being done now.
  void update(std::size_t done, const std::string& item = "") {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\r\033[K%s %zu/%zu %s", what_.c_str(), done, total_, item.c_str());
    std::fflush(stderr);
  }

 private:
  std::string what_;
  std::size_t total_;
  bool on_, shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace pe::cli
