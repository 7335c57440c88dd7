#include "common.h"

#include <charconv>
#include <fstream>

#include "pe/plan.h"

namespace pe::cli {
namespace {

std::int64_t parse_int(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) throw UsageError(what + ": not an integer: '" + text + "'");
  return v;
}

}  // namespace

std::vector<std::int64_t> positions_from(const std::string& range, const std::string& file) {
  if (range.empty() == file.empty()) {
    throw UsageError("--positions or --positions-file: give exactly one");
  }
  std::vector<std::int64_t> out;
  if (!range.empty()) {
    const auto colon = range.find(':');
    if (colon == std::string::npos) throw UsageError("--positions: expected A:B, got '" + range + "'");
    const std::int64_t a = parse_int(range.substr(0, colon), "--positions");
    const std::int64_t b = parse_int(range.substr(colon + 1), "--positions");
    if (a < 0 || b <= a || b - 1 > kMaxPosition) {
      throw UsageError("--positions: need 0 <= A < B <= 2^53 + 1, got " + range);
    }
    if (b - a > (std::int64_t{1} << 28))
      throw UsageError("--positions: more than 2^28 positions in " + range);
    for (std::int64_t p = a; p < b; ++p) out.push_back(p);
    return out;
  }
  std::ifstream in(file);
  if (!in) throw UsageError("--positions-file: cannot read '" + file + "'");
  std::string word;
  while (in >> word) out.push_back(parse_int(word, "--positions-file " + file));
  if (out.empty()) throw UsageError("--positions-file: no positions in '" + file + "'");
  return out;
}

}  // namespace pe::cli
