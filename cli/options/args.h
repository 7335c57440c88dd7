// The command line's own value parsers (what CLI11 does not know): position ranges, fractions,
// shards. Pure functions of their text, fuzzed by cli/fuzz/args_fuzz.cc.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "pe/check/errors.h"

namespace pe::cli {

// A bad command-line argument; the message names it ("--positions: ..."). The check engine's own
// BadRequest, so that what the engine refuses and what the flags' parsers refuse are one error.
using UsageError = check::BadRequest;

// A decimal integer, all of `text`; `what` names the argument in the error.
std::int64_t parse_int(const std::string& text, const std::string& what);

// "A:B", the half-open range [A, B) (Python's slice), with 0 <= A < B <= 2^53 + 1 and at most 2^28
// positions.
std::pair<std::int64_t, std::int64_t> parse_range(const std::string& text, const std::string& what);

// "5%" or "0.05" as 0.05; must lie in [0, 10).
double parse_fraction(const std::string& text, const std::string& what);

// "I/N" with 0 <= I < N.
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text, const std::string& what);

}  // namespace pe::cli
