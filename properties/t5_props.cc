// T5's relative position buckets (pe/t5.h): the exact bucket (pe::ref::t5_bucket, integers where t is near an
// integer) against floor(t) evaluated in MPFR at ~334 bits from the definition, the bucket's shape (exact
// below max_exact, non-decreasing in the distance, capped, the sign's half of the buckets, causal keys after
// the query at 0), and the formulation engines ship (HF's float32 function) within its contract: the exact
// bucket, or float32's other bucket where t lies within float32's error of a boundary.

#include <cmath>

#include "pe/ref/real.h"
#include "pe/ref/t5.h"
#include "pe/t5.h"
#include "support/property_util.h"

namespace pe {
// RapidCheck's printer for a counterexample's parameters (found by argument-dependent lookup).
inline void showValue(const T5Buckets& t, std::ostream& os) {
  os << (t.bidirectional ? "bidirectional" : "causal") << ", num_buckets " << t.num_buckets
     << ", max_distance " << t.max_distance;
}
}  // namespace pe

namespace pe::testing {
namespace {

// The bucket counts and distances T5-family models ship (32/128 T5 and mT5, 64 and 256 elsewhere), and any
// valid pair of up to 4096 buckets and 2^16 positions, distances just past max_exact among them.
rc::Gen<T5Buckets> gen_t5() {
  return rc::gen::exec([] {
    T5Buckets t;
    t.bidirectional = *rc::gen::arbitrary<bool>().as("bidirectional");
    t.num_buckets = *rc::gen::oneOf(rc::gen::element<std::int64_t>(32, 64, 128, 256),
                                    rc::gen::inRange<std::int64_t>(4, 4097))
                         .as("num_buckets");
    const std::int64_t e = t5_max_exact(t);
    // Distances near max_exact too, where ln(D/E) is small and the log argument's rounding moves t most.
    t.max_distance = *rc::gen::oneOf(rc::gen::element<std::int64_t>(128, 256, 1024),
                                     rc::gen::inRange<std::int64_t>(1, 1 << 16),
                                     rc::gen::inRange<std::int64_t>(e + 1, e + 65))
                          .as("max_distance");
    RC_PRE(e > 0 && t.max_distance > e);
    return t;
  });
}

// Offsets of every scale: small ones (the exact buckets), around max_exact and max_distance, and far.
rc::Gen<std::int64_t> gen_offset(std::int64_t max_distance) {
  return rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-64, 65),
                        rc::gen::inRange<std::int64_t>(-4 * max_distance, 4 * max_distance + 1),
                        rc::gen::map(rc::gen::inRange(0, 41), [](int k) { return std::int64_t{1} << k; }),
                        rc::gen::map(rc::gen::inRange(0, 41), [](int k) { return -(std::int64_t{1} << k); }));
}

TEST(T5Props, ExactBucketIsTheDefinitionsFloor) {
  PE_RC_CHECK("bucket = base + min(E + floor(t), B - 1) with t from MPFR, d >= E; d itself below E", [] {
    const T5Buckets t = *gen_t5().as("T5");
    const std::int64_t n = *gen_offset(t.max_distance).as("key - query");
    const std::int64_t buckets = t.bidirectional ? t.num_buckets / 2 : t.num_buckets;
    const std::int64_t base = t.bidirectional && n > 0 ? buckets : 0;
    const std::int64_t d = t.bidirectional ? (n < 0 ? -n : n) : (n < 0 ? -n : 0);
    const std::int64_t e = buckets / 2;
    std::int64_t want = base + d;
    if (d >= e) {
      const ref::Real tr =
          ref::Real(buckets - e) * log(ref::Real(d) / e) / log(ref::Real(t.max_distance) / e);
      const ref::Real nearest = round(tr);
      RC_PRE(abs(tr - nearest) > ref::Real(1e-60));  // an integer t: the integer decision alone says (below)
      want = base + std::min(e + static_cast<std::int64_t>(floor(tr)), buckets - 1);
    }
    RC_ASSERT(ref::t5_bucket(t, n).bucket == want);
  });
}

// At an integer t the integers decide: with B = 2E buckets per sign and D = E·r^E, t = E·ln(d/E)/ln(r^E) is
// exactly k at d = E·r^k, so the bucket is E + k there and E + k − 1 one position closer.
TEST(T5Props, AnIntegerTIsItsOwnFloor) {
  PE_RC_CHECK("t = k exactly at d = E·r^k: the bucket is E + k, and E + k − 1 at d − 1", [] {
    const bool bidirectional = *rc::gen::arbitrary<bool>().as("bidirectional");
    const std::int64_t r = *rc::gen::inRange<std::int64_t>(2, 4).as("ratio r");
    const std::int64_t e = *rc::gen::inRange<std::int64_t>(2, 9).as("max_exact E");
    std::int64_t max_distance = e;
    for (std::int64_t i = 0; i < e; ++i) max_distance *= r;
    const T5Buckets t{bidirectional, 2 * e * (bidirectional ? 2 : 1), max_distance};
    RC_ASSERT(t5_max_exact(t) == e);
    const std::int64_t k = *rc::gen::inRange<std::int64_t>(0, e).as("k");
    std::int64_t d = e;
    for (std::int64_t i = 0; i < k; ++i) d *= r;
    const std::int64_t sign = bidirectional ? 1 : -1, base = bidirectional ? 2 * e : 0;
    RC_ASSERT(ref::t5_bucket(t, sign * d).bucket == base + e + k);
    RC_ASSERT(ref::t5_bucket(t, sign * (d - 1)).bucket == base + e + k - 1);
  });
}

TEST(T5Props, TheBucketsShape) {
  PE_RC_CHECK(
      "exact below E, non-decreasing in d, capped at B - 1, the sign's half, causal keys after at 0", [] {
        const T5Buckets t = *gen_t5().as("T5");
        const std::int64_t d = *rc::gen::inRange<std::int64_t>(0, 8 * t.max_distance).as("distance");
        const std::int64_t buckets = t.bidirectional ? t.num_buckets / 2 : t.num_buckets;
        const std::int64_t before = ref::t5_bucket(t, -d).bucket, after = ref::t5_bucket(t, -(d + 1)).bucket;
        RC_ASSERT(before <= after);
        RC_ASSERT(after <= buckets - 1);
        if (d < buckets / 2) RC_ASSERT(before == d);
        if (d >= t.max_distance) RC_ASSERT(before == buckets - 1);
        if (t.bidirectional && d > 0) {
          RC_ASSERT(ref::t5_bucket(t, d).bucket == buckets + before);
        } else if (!t.bidirectional && d > 0) {
          RC_ASSERT(ref::t5_bucket(t, d).bucket == 0);
        }
      });
}

TEST(T5Props, HfsFloat32FunctionWithinItsContract) {
  PE_RC_CHECK("float32 bucket = the exact one, or float32's other one at a boundary", [] {
    const T5Buckets t = *gen_t5().as("T5");
    const std::int64_t n = *gen_offset(t.max_distance).as("key - query");
    const ref::T5Exact exact = ref::t5_bucket(t, n);
    const std::int64_t got = t5_bucket_float32(t, n);
    RC_ASSERT(got == exact.bucket || (exact.alternative >= 0 && got == exact.alternative));
  });
}

TEST(T5Props, InvalidParametersAreNamed) {
  for (const auto& [t, parameter] :
       {std::pair{T5Buckets{true, 1, 128}, "num_buckets"}, std::pair{T5Buckets{true, 3, 128}, "num_buckets"},
        std::pair{T5Buckets{true, 5000, 128}, "num_buckets"},
        std::pair{T5Buckets{true, 32, 8}, "max_distance"},
        std::pair{T5Buckets{false, 32, 16}, "max_distance"}}) {
    try {
      validate(t);
      ADD_FAILURE() << "accepted " << parameter;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.parameter(), parameter);
    }
  }
  EXPECT_NO_THROW(validate(T5Buckets{true, 32, 128}));
  EXPECT_NO_THROW(validate(T5Buckets{false, 32, 17}));
}

}  // namespace
}  // namespace pe::testing
