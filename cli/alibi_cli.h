// `check --family alibi` and `export --family alibi`: the ALiBi halves of the two commands, called by
// check.cc and export.cc once the shared options are parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "alibi_options.h"
#include "npy.h"
#include "pe/harness/measure.h"

namespace pe::cli {

// A [heads] slopes or [heads, queries, keys] bias array (also [1, heads, queries, keys]) against the
// exact reference within `budget` (described by `budget_text`); the diagnosis when it fails badly.
// Returns the exit code.
// With `json_path`, also the result as JSON (check_json.h).
int check_alibi(const NpyArray& data, const std::string& path, const AlibiFlags& flags,
                const harness::Budget& budget, const std::string& budget_text, const std::string& json_path);

struct AlibiExport {
  std::vector<double> values;
  std::vector<std::size_t> shape;
};
// The slopes (--slopes-only) or the bias table: correctly rounded from the reference, or `variant`'s.
AlibiExport export_alibi(const AlibiFlags& flags, bool reference, const std::string& variant, DType dtype);

}  // namespace pe::cli
