// The census step, shared by `verify` and `run`.
#pragma once

#include <cstdint>
#include <string>

namespace pe::cli {

struct VerifyOptions {
  std::string glob = "*";
  std::string effort = "quick";
  std::int64_t max_position = 0;
  std::string json_out;
  std::string markdown_out;
};

int verify(const VerifyOptions& options);

}  // namespace pe::cli
