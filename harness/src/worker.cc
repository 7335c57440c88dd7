#include "pe/harness/worker.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace pe::harness {

std::string in_worker(const std::string& who, double timeout_s,
                      const std::function<void(const Started&)>& work) {
  int fds[2];
  if (pipe(fds) != 0) return "";  // no worker to be had: the in-process sweep follows, unguarded
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "";
  }
  if (pid == 0) {
    close(fds[0]);
    // The worker never returns into the caller's code: an exception ends it here (the parent then does the
    // work in-process and meets the same exception, with its message).
    try {
      work([fd = fds[1]](const std::string& c) {
        const std::string line = c + "\n";
        [[maybe_unused]] const ssize_t n = write(fd, line.data(), line.size());
      });
    } catch (...) {
    }
    _exit(0);  // nothing of the parent's to flush or free
  }
  close(fds[1]);
  std::string last = "its first case", pending;
  bool hung = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(timeout_s * 1000));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      hung = true;
      kill(pid, SIGKILL);
      break;
    }
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
      last = pending.substr(0, nl);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (hung)
    return fmt::format("{} hung: no call returned within {:g} s (the worker was killed) in {}", who,
                       timeout_s, last);
  if (WIFSIGNALED(status))
    return fmt::format("{} crashed: signal {} ({}) in {}", who, WTERMSIG(status), strsignal(WTERMSIG(status)),
                       last);
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return fmt::format("{} crashed: its worker exited with status {} in {}", who, WEXITSTATUS(status), last);
  return "";
}

}  // namespace pe::harness
