// GoogleTest main for the property suites: loads the plugins in $PE_PLUGINS (before InitGoogleTest
// reads the registry into the suites' instances), fixes RapidCheck's seed unless RC_PARAMS says
// otherwise, and prints it so that any failure reproduces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "pe/harness/plugin.h"
#include "pe/variant.h"
#include "support/rc_params.h"

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
  pe::testing::fix_rapidcheck_params();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
