// T5's relative position buckets checked (pe/t5.h): an engine's bucket indices [queries, keys], or the bias
// [heads, queries, keys] it gathered from the learned table [num_buckets, heads] (HF's
// relative_attention_bias weight), against the exact buckets of each key − query (pe::ref::t5_bucket). Every
// element is the exact bucket's (its table entry, bit for bit in the data's values), or float32's other
// bucket where t lies within float32's error of a bucket boundary; the report lists those offsets. A failure
// is matched against T5's mistakes: the causal flag inverted, the offset taken as query − key, another
// num_buckets or max_distance.
#pragma once

#include <optional>
#include <vector>

#include "pe/check/check.h"
#include "pe/t5.h"

namespace pe::check {

struct T5Request {
  DataView data;  // [queries, keys] bucket indices (integers), or [heads, queries, keys] a bias
  std::optional<DataView> table;  // [num_buckets, heads]: the data is then the bias gathered from it
  std::vector<std::int64_t> queries, keys;
  T5Buckets buckets;
};

Report check_t5(const T5Request& r, const Names& names);

// The exact buckets of each offset, and the float32 alternatives (-1 where none): t5_buckets in Python.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> t5_buckets_of(
    const T5Buckets& t, std::span<const std::int64_t> relative, const Names& names);

}  // namespace pe::check
