// An outside kernel's crash or hang must not take the report with it: the work runs first in a forked
// worker that reports each case before it starts (issue 34). What ended the worker, if anything, names the
// kernel, the signal or the time limit, and the last case started.
#pragma once

#include <functional>
#include <string>

namespace pe::harness {

// A case about to start, for the worker's last words.
using Started = std::function<void(const std::string&)>;

// Runs `work` in a forked worker. "" when it finished; else "<who> crashed: signal 11 (Segmentation fault)
// in <case>", "<who> crashed: its worker exited with status N in <case>" (a sanitizer's handler), or
// "<who> hung: no call returned within T s (the worker was killed) in <case>" when no case started or
// finished within `timeout_s`. "" too when no worker could be started (the caller's work then runs
// unguarded). The worker's results are discarded: the caller redoes the work in-process once it survived.
std::string in_worker(const std::string& who, double timeout_s,
                      const std::function<void(const Started&)>& work);

}  // namespace pe::harness
