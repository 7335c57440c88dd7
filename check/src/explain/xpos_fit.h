// What gain an xPos output carries, read back from its pairs' norms (a rotation keeps them): per token the
// exponent w of ζ_j^w that fits ln(|y_j|/|x_j|) over its heads and pairs, then w = slope·p + intercept over
// the tokens, which says q or k (the slope's sign), scale_base (1/|slope|) and the centre (−intercept/slope).
#pragma once

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
  double residual = 0;  // max over tokens |w_t − (slope·p_t + intercept)|
  // Standard errors of scale_base and the centre read back (the fit's, from the residuals, at least one unit
  // of the data type's rounding in w): a difference from the given value is named only beyond 4 of them.
  double scale_base_error = 0, centre_error = 0;
  double tolerance = 0;  // what the data type's rounding leaves in w_t (16 units over |ln ζ_0|)
  std::size_t tokens = 0;
};
XPosReading read_xpos_gain(const RopeData& data, const RopePlan& plan, DType dtype);

// A failing xPos check explained: the gain read back against the one given (q or k, scale_base, centre,
// none at all), each difference named; where the gain is the one given, the rotation under it is diagnosed
// as any RoPE output's, on y with the exact gains divided out.
void diagnose_xpos_output(const RopeData& data, const RopePlan& plan, const Convention& given,
                          const XPos& xpos, const harness::Measurement& bands, const std::vector<bool>& over,
                          Report& out, const Names& names, const std::vector<Convention>& alternatives,
                          DType dtype);

}  // namespace pe::check
