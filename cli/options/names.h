// The command line's words for the check engine's parameters (pe/check/names.h): each canonical name's
// flag ("factor" -> "--factor"), with a command's own exceptions (export's rotary dim is --dim, check's
// data are TABLE, --input and --output).
#pragma once

#include <map>
#include <string>

#include "pe/check/names.h"

namespace pe::cli {

// The flags every command shares, with `overrides` taking precedence.
check::Names flag_names(std::map<std::string, std::string, std::less<>> overrides = {});

// The flag of a canonical name ("" when no command has one).
std::string flag_for_parameter(std::string_view canonical);

}  // namespace pe::cli
