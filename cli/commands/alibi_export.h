// `export --family alibi`: the ALiBi half of the command, called by export.cc once the shared options are
// parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "alibi_options.h"
#include "pe/types.h"

namespace pe::cli {

struct AlibiExport {
  std::vector<double> values;
  std::vector<std::size_t> shape;
};
// The slopes (--slopes-only) or the bias table: correctly rounded from the reference, or `variant`'s.
AlibiExport export_alibi(const AlibiFlags& flags, bool reference, const std::string& variant, DType dtype);

}  // namespace pe::cli
