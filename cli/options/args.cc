#include "args.h"

#include <charconv>

#include "pe/harness/shard.h"
#include "pe/plan.h"

namespace pe::cli {
namespace {

template <class T>
bool whole(const std::string& s, T& v) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  return !s.empty() && ec == std::errc() && ptr == end;
}

}  // namespace

std::int64_t parse_int(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  if (!whole(text, v)) throw UsageError(what + ": not an integer: '" + text + "'");
  return v;
}

std::pair<std::int64_t, std::int64_t> parse_range(const std::string& text, const std::string& what) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw UsageError(what + ": expected A:B, got '" + text + "'");
  const std::int64_t a = parse_int(text.substr(0, colon), what);
  const std::int64_t b = parse_int(text.substr(colon + 1), what);
  if (a < 0 || b <= a || b - 1 > kMaxPosition)
    throw UsageError(what + ": need 0 <= A < B <= 2^53 + 1, got " + text);
  if (b - a > (std::int64_t{1} << 28)) throw UsageError(what + ": more than 2^28 positions in " + text);
  return {a, b};
}

double parse_fraction(const std::string& text, const std::string& what) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  double v = 0;
  if (!whole(t, v)) throw UsageError(what + ": not a number: '" + text + "'");
  if (percent) v /= 100;
  if (!(v >= 0 && v < 10)) throw UsageError(what + ": must be between 0 and 1000%, got '" + text + "'");
  return v;
}

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text, const std::string& what) {
  const auto slash = text.find('/');
  std::size_t i = 0, n = 0;
  if (slash == std::string::npos || !whole(text.substr(0, slash), i) || !whole(text.substr(slash + 1), n) ||
      n == 0 || i >= n || n > census::kMaxShards) {
    throw UsageError(what + ": expected I/N with 0 <= I < N <= " + std::to_string(census::kMaxShards) +
                     ", got '" + text + "'");
  }
  return {i, n};
}

}  // namespace pe::cli
