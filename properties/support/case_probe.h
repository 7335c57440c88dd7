// The diagnosis of a failing RoPE case: a minimal case (one row, a dozen channels) fits too many conventions
// to name one, so the kernel is rerun under the case's configuration on calls big enough to read back
// (64 channels or more, several heads, positions spread across the configuration's original context), and
// the check engine (check::check_rope) explains their output.
#pragma once

#include <string>

#include "support/case_report.h"

namespace pe::testing {

// "diagnosis (where): the data fits: ..." or "diagnosis ...: undetermined (...)", one claim a line.
std::string probe_diagnosis(const RopeCall& c);

}  // namespace pe::testing
