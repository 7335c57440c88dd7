// `check A --against B`: two implementations of the same op (CPU and GPU, fused and unfused) on the
// same input, each held to the exact reference under the same budget, band by band: which of them is
// wrong where, and how far apart they are. Agreeing with each other proves nothing (the engines' own
// tests compare siblings); the reference decides.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "pe/harness/measure.h"

namespace pe::check {

class Against {
 public:
  // `a`: the first implementation's values, indexed as the data (B's element at index k is A's a[k]).
  // `promised`: Measurement::promise of the budget both are held to.
  Against(std::span<const double> a, std::int64_t promised);
  // B's element, found at `index` in the data.
  void add(const harness::ElementRecord& b, std::size_t index);
  const harness::Measurement& b() const { return b_; }
  bool pass(const harness::Measurement& a) const { return a.pass() && b_.pass(); }
  // Per band: each one's worst err/budget and verdict, max |A - B|, and which is wrong.
  std::string table(const harness::Measurement& a, const std::string& a_name,
                    const std::string& b_name) const;
  nlohmann::json to_json(const harness::Measurement& a, DType dtype, const std::string& b_name) const;

 private:
  std::span<const double> a_;
  harness::Measurement b_;
  std::vector<double> diff_;  // max |A - B| per band, by band_edges() index
};

}  // namespace pe::check
