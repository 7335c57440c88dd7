// What gain an xPos output carries, read back from its pairs' norms (a rotation keeps them): per token the
// exponent w of ζ_j^w that fits ln(|y_j|/|x_j|) over its heads and pairs, then w = slope·p + intercept over
// the tokens, which says q or k (the slope's sign), scale_base (1/|slope|) and the centre (−intercept/slope).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/check/report.h"
#include "pe/harness/measure.h"
#include "pe/plan.h"
#include "pe/xpos.h"

namespace pe::check {

struct XPosReading {
  bool read = false;  // at least two positions with gained pairs
  double slope = 0, intercept = 0;
  double residual = 0;   // max over tokens |w_t − (slope·p_t + intercept)|
  double tolerance = 0;  // what the data type's rounding leaves in w_t (16 units over |ln ζ_0|)
  // The fit's standard errors (from the residuals, at least one unit of the data type's rounding in w): a
  // reading differs from a value only beyond 4 of them.
  double slope_error = 0, intercept_error = 0, scale_base_error = 0, centre_error = 0;
  std::size_t tokens = 0;

  bool fits() const noexcept { return read && residual <= tolerance; }
  // The slope within 4 standard errors of 0: the gain does not follow the position.
  bool flat() const noexcept { return std::fabs(slope) <= 4 * slope_error; }
};
XPosReading read_xpos_gain(const RopeData& data, const RopePlan& plan, DType dtype);

// A failing xPos check explained: the gain read back against the one given (q or k, scale_base, centre,
// none at all, one constant in the position), each difference named, under the given pairing or, where the
// norms follow no line there, the other layout's (named); where the gain is the one given, the rotation under
// it is diagnosed as any RoPE output's, on y with the exact gains divided out.
void diagnose_xpos_output(const RopeData& data, const RopePlan& plan, const Convention& given,
                          const XPos& xpos, const harness::Measurement& bands, const std::vector<bool>& over,
                          Report& out, const Names& names, const std::vector<Convention>& alternatives,
                          DType dtype);

}  // namespace pe::check
