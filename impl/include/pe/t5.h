// T5's relative position buckets (HF T5Attention._relative_position_bucket; mT5, LongT5, UMT5, Pix2Struct,
// Switch): the offset n = key − query of each score mapped to one of num_buckets learned biases.
//   bidirectional: half the buckets per sign (n > 0 from num_buckets / 2 on), d = |n|
//   causal:        d = max(−n, 0) (keys after the query share bucket 0)
//   with B the buckets of one sign and E = B / 2 (max_exact): d < E -> d; else E + floor(t), at most B − 1,
//   with t = (B − E)·ln(d / E) / ln(max_distance / E).
// The exact bucket is pe::ref::t5_bucket's (reference/); t5_bucket_float32 is the formulation engines ship.
#pragma once

#include <cstdint>

namespace pe {

struct T5Buckets {
  bool bidirectional = true;
  std::int64_t num_buckets = 32, max_distance = 128;
};

// InvalidArgument naming num_buckets (< 2, or > 4096: T5 ships 32, others up to a few hundred) or
// max_distance (not above max_exact: HF's log of a ratio
// <= 1, no T5 configuration, or > 2^40).
void validate(const T5Buckets& t);
// max_exact: E = B / 2 with B = num_buckets (causal) or num_buckets / 2 (bidirectional).
std::int64_t t5_max_exact(const T5Buckets& t) noexcept;

// The offset's side: the buckets of its half (B: all of them causal, half bidirectional), the half's first
// bucket (num_buckets / 2 for n > 0 bidirectional, else 0) and the distance d (|n| bidirectional, max(−n, 0)
// causal).
struct T5Side {
  std::int64_t buckets = 0, base = 0, distance = 0;
};
T5Side t5_side(const T5Buckets& t, std::int64_t relative) noexcept;

// HF's function as torch runs it: the offset's sign split in integers, then for d >= E
// E + long(log(float(d) / E) / float(log(max_distance / E)) * (B − E)), capped at B − 1, every operation in
// float32 (torch's float tensors; math.log of the double ratio rounded to float32 when it divides them).
std::int64_t t5_bucket_float32(const T5Buckets& t, std::int64_t relative) noexcept;

}  // namespace pe
