// The repository root, for tests that read the shipped files (docs, configs, data). It is compiled into one
// small unit (source_dir.cc) rather than defined on every test unit's command line: a path there is part of
// each unit's ccache key, and a fresh clone elsewhere would recompile every test.
#pragma once

#include <string>

namespace pe::testing {
std::string source_dir();
}  // namespace pe::testing
