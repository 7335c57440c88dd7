// M-RoPE's sections read back (issue 54: sections given wrong got only a note): the axis each pair read
// (readback/axis_recovery) turned into the sections of either layout's rule that every determined pair
// agrees with. One set is a claim, with the parameters to rerun the check with; one other layout, a claim
// of the layout; one layout with several sets, a claim of the sections they all give alike and the others
// undetermined, with why (the axes' positions coincide, or differ too little at those pairs' frequencies);
// otherwise a note. Nothing when every determined pair reads the given rule's axis.
#pragma once

#include <optional>
#include <string>

#include "pe/check/spec.h"
#include "pe/rope_form.h"
#include "readback/axis_recovery.h"

namespace pe::check {

struct SectionFit {
  std::string words, support;          // "mrope_section 16,24,24 (given 24,24,16)"; empty: as given
  bool fits = false;                   // a claim (else a note)
  std::optional<RopeSpec> hypothesis;  // the sections (and layout) to rerun with, where one set holds
};

SectionFit fit_sections(const RecoveredAxes& r, const RopeForm& given);

}  // namespace pe::check
