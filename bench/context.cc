// Stamps the benchmark JSON's context with what the numbers depend on.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <hwy/highway.h>
#include <mpfr.h>

#include <Eigen/Core>
#include <boost/version.hpp>
#include <fstream>
#include <string>

#include "build_info.h"
#include "grid.h"

namespace pe::bench {

void stamp_context() {
  std::string cpu = "unknown";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  const auto targets = hwy::SupportedAndGeneratedTargets();
  benchmark::AddCustomContext("pe_compiler", "GCC " __VERSION__);
  benchmark::AddCustomContext("pe_cxx_flags", PE_CXX_FLAGS);
  benchmark::AddCustomContext("pe_cpu", cpu);
  benchmark::AddCustomContext("pe_hwy_best_target",
                              targets.empty() ? "none" : hwy::TargetName(targets.front()));
  benchmark::AddCustomContext("pe_eigen_simd", Eigen::SimdInstructionSetsInUse());
  benchmark::AddCustomContext(
      "pe_versions", fmt::format("highway {}.{}.{}, eigen {}.{}.{}, boost {}, mpfr {}, fmt {}", HWY_MAJOR,
                                 HWY_MINOR, HWY_PATCH, EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                                 EIGEN_MINOR_VERSION, BOOST_LIB_VERSION, MPFR_VERSION_STRING, FMT_VERSION));
}

}  // namespace pe::bench
