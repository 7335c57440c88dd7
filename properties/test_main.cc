// GoogleTest main for the property suites: loads the plugins in $PE_PLUGINS (before InitGoogleTest
// reads the registry into the suites' instances), fixes RapidCheck's seed unless RC_PARAMS says
// otherwise, and prints it so that any failure reproduces; every kernel call is guarded (KernelGuard::All).
// With $PE_LAST_TEST set, each test's full name is written there before it starts: when an outside kernel
// crashes the binary, `verify` names the test and reruns the rest without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>

#include "pe/harness/instance.h"
#include "pe/harness/plugin.h"
#include "pe/kernel_guard.h"
#include "pe/variant.h"
#include "support/rc_params.h"

namespace {
class LastTest : public ::testing::EmptyTestEventListener {
 public:
  explicit LastTest(std::string path) : path_(std::move(path)) {}
  // The test's full name, then its parameter (the instance, for the suites over the registry); the last
  // case file ($PE_LAST_CASE, written before each RoPE call) starts empty with each test.
  void OnTestStart(const ::testing::TestInfo& info) override {
    if (const char* c = std::getenv("PE_LAST_CASE"); c != nullptr && *c != '\0') {
      std::ofstream truncate(c, std::ios::trunc);
    }
    std::ofstream(path_, std::ios::trunc) << info.test_suite_name() << "." << info.name() << "\n"
                                          << (info.value_param() != nullptr ? info.value_param() : "") << "\n"
                                          << std::flush;
  }
  void OnTestEnd(const ::testing::TestInfo&) override { std::ofstream(path_, std::ios::trunc); }

 private:
  std::string path_;
};
}  // namespace

int main(int argc, char** argv) {
  try {
    pe::harness::load_plugins_from_env();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  // An outside suite (pe_add_variant_suite) that registered nothing would pass with empty suites.
  const char* selection = std::getenv("PE_VARIANT");
  if (selection != nullptr && std::string_view(selection) == "@outside" &&
      std::all_of(pe::registry().begin(), pe::registry().end(),
                  [](const pe::Variant* v) { return pe::is_builtin(*v); })) {
    std::fprintf(stderr,
                 "%s: PE_VARIANT=@outside, but no variant outside libpe is registered (the sources given "
                 "to pe_add_variant_suite register none, and no plugin was loaded)\n",
                 argv[0]);
    return 1;
  }
  try {
    pe::harness::in_this_shard("");  // a malformed $PE_SHARD is refused here, not while suites instantiate
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  pe::testing::fix_rapidcheck_params();
  // Every kernel under test, built-in or not, gets the guard zones (pe/kernel_guard.h): a stray write is a
  // failure that names where, never silent corruption of a neighbouring row.
  const pe::ScopedKernelGuard guarded(pe::KernelGuard::All);
  ::testing::InitGoogleTest(&argc, argv);
  if (const char* last = std::getenv("PE_LAST_TEST"); last != nullptr && *last != '\0')
    ::testing::UnitTest::GetInstance()->listeners().Append(new LastTest(last));
  return RUN_ALL_TESTS();
}
