#include "pe/rope_scaling.h"

#include <cmath>
#include <string>

#include "detail/check.h"

namespace pe {
namespace {

struct Name {
  RopeScalingType type;
  std::string_view name;
};
constexpr Name kNames[] = {{RopeScalingType::None, "none"},        {RopeScalingType::Linear, "linear"},
                           {RopeScalingType::Ntk, "ntk"},          {RopeScalingType::Dynamic, "dynamic"},
                           {RopeScalingType::Yarn, "yarn"},        {RopeScalingType::Llama3, "llama3"},
                           {RopeScalingType::LongRope, "longrope"}};

}  // namespace

std::string_view to_string(RopeScalingType t) noexcept {
  for (const Name& n : kNames) {
    if (n.type == t) return n.name;
  }
  return "?";
}

std::optional<RopeScalingType> parse_rope_scaling_type(std::string_view s) noexcept {
  for (const Name& n : kNames) {
    if (n.name == s) return n.type;
  }
  return std::nullopt;
}

std::int64_t partial_rotary_dim(std::int64_t head_dim, double partial_rotary_factor) {
  if (!std::isfinite(partial_rotary_factor) || !(partial_rotary_factor > 0.0) ||
      partial_rotary_factor > 1.0) {
    detail::fail("partial_rotary_factor",
                 "partial_rotary_factor must be in (0, 1], got " + detail::show(partial_rotary_factor));
  }
  // HF: int(head_dim * partial_rotary_factor), the product in double, truncated.
  const auto dim = static_cast<std::int64_t>(static_cast<double>(head_dim) * partial_rotary_factor);
  if (dim < 2 || dim % 2 != 0) {
    detail::fail("partial_rotary_factor", "partial_rotary_factor " + detail::show(partial_rotary_factor) +
                                              " gives rotary_dim = int(" + std::to_string(head_dim) + " * " +
                                              detail::show(partial_rotary_factor) +
                                              ") = " + std::to_string(dim) + ", which must be even and >= 2");
  }
  return dim;
}

}  // namespace pe
