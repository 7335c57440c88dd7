// RapidCheck's parameters: a fixed default seed, and Debian's 2021 snapshot's max_size <= 100.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace pe::testing {

inline constexpr const char* kDefaultRcParams = "seed=20261130 max_size=100";

// Sets RC_PARAMS to the default when unset (RapidCheck reads it on first use), then prints it.
inline std::string fix_rapidcheck_params() {
  if (std::getenv("RC_PARAMS") == nullptr) setenv("RC_PARAMS", kDefaultRcParams, 0);
  const std::string params = std::getenv("RC_PARAMS");
  std::printf(
      "RapidCheck: RC_PARAMS=\"%s\" (set RC_PARAMS to override; a failure prints its "
      "reproduce string)\n",
      params.c_str());
  return params;
}

}  // namespace pe::testing
