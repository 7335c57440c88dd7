// libFuzzer target: the .npy reader on arbitrary bytes must either return an array whose size
// matches its shape or throw NpyError; never crash, hang or touch memory it does not own.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pe/check/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks how 16-bit integers are read, so both paths are explored.
  const pe::DType u2_as = (data[0] & 1) ? pe::DType::BF16 : pe::DType::F32;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const pe::check::NpyArray a = pe::check::parse_npy(bytes, "fuzz", u2_as);
    std::size_t count = 1;
    for (std::size_t n : a.shape) count *= n;
    if (count != a.values.size()) std::abort();
  } catch (const pe::check::NpyError&) {
  }
  return 0;
}
