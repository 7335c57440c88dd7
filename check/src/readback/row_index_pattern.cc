#include "readback/row_index_pattern.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>

namespace pe::check {
namespace {

struct RowIndex {
  // The position row (t, h) was turned by under this mistake; nullopt where it names none (token h beyond
  // the data).
  std::function<std::optional<std::int64_t>(std::size_t t, std::size_t h)> at;
  std::string words;
};

std::vector<RowIndex> row_indices(const RopeBatch& b) {
  const auto s = [](std::size_t v) { return static_cast<std::int64_t>(v); };
  const std::size_t tokens = b.tokens(), heads = b.heads;
  return {
      {[s](std::size_t, std::size_t h) { return std::optional<std::int64_t>(s(h)); },
       "rows turned by their head index, not their token's position: the sequence and head axes exchanged (a "
       "cos/sin cache indexed by the head, or [heads, tokens] data read as [tokens, heads])"},
      {[&b, tokens](std::size_t, std::size_t h) {
         return h < tokens ? std::optional<std::int64_t>(b.position(h)) : std::nullopt;
       },
       "rows turned by the position of token h (h their head index), not their own token's: the sequence and "
       "head axes exchanged where the positions are read"},
      {[s, heads](std::size_t t, std::size_t h) { return std::optional<std::int64_t>(s(t * heads + h)); },
       "rows turned by their flattened row index t*heads + h, not their token's position: one position per "
       "(token, head) row"},
      {[s, tokens](std::size_t t, std::size_t h) { return std::optional<std::int64_t>(s(h * tokens + t)); },
       "rows turned by h*tokens + t (their index in [heads, tokens] order), not their token's position: one "
       "position per (token, head) row, with the sequence and head axes exchanged"},
  };
}

}  // namespace

std::optional<std::string> row_index_pattern(const RopeData& d, const std::vector<RecoveredRow>& rows) {
  std::set<std::size_t> heads;
  std::size_t determined = 0;
  for (const RecoveredRow& r : rows) {
    if (!r.position) continue;
    ++determined;
    heads.insert(r.head);
  }
  if (heads.size() < 2 || 2 * determined <= rows.size()) return std::nullopt;
  for (const RowIndex& index : row_indices(d.batch)) {
    bool every = true, tells = false;
    for (const RecoveredRow& r : rows) {
      if (!r.position) continue;
      const std::optional<std::int64_t> p = index.at(r.token, r.head);
      every = every && p == r.position;
      tells = tells || (p && *p != d.batch.position(r.token));
    }
    if (every && tells) return index.words;
  }
  return std::nullopt;
}

}  // namespace pe::check
