#include "source_dir.h"

#ifndef PE_SOURCE_DIR
#error "PE_SOURCE_DIR: the repository root"
#endif

namespace pe::testing {
std::string source_dir() { return PE_SOURCE_DIR; }
}  // namespace pe::testing
