// Test support: two measurements alike in everything but their bands' 99th percentiles, bit for bit — the
// verdict, counts, every band's maxima with their elements, and the worst list.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>

#include "pe/harness/measure.h"

namespace pe::harness {

inline bool bits_equal(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline void expect_same_but_percentiles(const Measurement& a, const Measurement& b, const std::string& what) {
  ASSERT_EQ(a.verdict(), b.verdict()) << what;
  EXPECT_EQ(a.count(), b.count()) << what;
  EXPECT_EQ(a.violations(), b.violations()) << what;
  EXPECT_EQ(a.undecidable(), b.undecidable()) << what;
  ASSERT_EQ(a.bands().size(), b.bands().size()) << what;
  for (std::size_t k = 0; k < a.bands().size(); ++k) {
    const BandStats &x = a.bands()[k], &y = b.bands()[k];
    const std::string where = what + " band " + std::to_string(k);
    EXPECT_EQ(x.samples, y.samples) << where;
    EXPECT_EQ(x.percentile_samples, y.percentile_samples) << where;
    EXPECT_EQ(x.violations, y.violations) << where;
    EXPECT_EQ(x.encoding, y.encoding) << where;
    EXPECT_EQ(x.undecidable, y.undecidable) << where;
    for (const auto& [u, v, name] : {std::tuple{&x.max_abs, &y.max_abs, "max_abs"},
                                     {&x.max_ulp, &y.max_ulp, "max_ulp"},
                                     {&x.max_ratio, &y.max_ratio, "max_ratio"}}) {
      EXPECT_TRUE(bits_equal(u->value, v->value))
          << where << " " << name << ": " << u->value << " vs " << v->value;
      EXPECT_EQ(u->at.row, v->at.row) << where << " " << name;
      EXPECT_EQ(u->at.head, v->at.head) << where << " " << name;
      EXPECT_EQ(u->at.channel, v->at.channel) << where << " " << name;
    }
    EXPECT_TRUE(bits_equal(x.budget_at_max_abs, y.budget_at_max_abs)) << where;
  }
  ASSERT_EQ(a.worst().size(), b.worst().size()) << what;
  for (std::size_t i = 0; i < a.worst().size(); ++i) {
    EXPECT_TRUE(bits_equal(a.worst()[i].abs_error, b.worst()[i].abs_error)) << what << " worst " << i;
    EXPECT_TRUE(bits_equal(a.worst()[i].budget, b.worst()[i].budget)) << what << " worst " << i;
    EXPECT_EQ(a.worst()[i].row, b.worst()[i].row) << what << " worst " << i;
    EXPECT_EQ(a.worst()[i].channel, b.worst()[i].channel) << what << " worst " << i;
  }
}

}  // namespace pe::harness
