// GoogleTest main for the property suites: fixes RapidCheck's seed unless RC_PARAMS says otherwise,
// and prints it so that any failure reproduces.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "support/rc_params.h"

int main(int argc, char** argv) {
  pe::testing::fix_rapidcheck_params();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
