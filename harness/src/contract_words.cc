#include "pe/harness/contract_words.h"

#include <fmt/format.h>

#include "pe/harness/family_traits.h"

namespace pe::harness {

std::string position_words(std::int64_t p) {
  if (p > 0 && (p & (p - 1)) == 0)
    return fmt::format("2^{}", __builtin_ctzll(static_cast<unsigned long long>(p)));
  return std::to_string(p);
}

std::string budget_words(const Variant& v) {
  const Contract& c = v.contract();
  std::string s;
  for (DType t : c.outputs) {
    const std::string c1 =
        c.c1_pair == 0 ? fmt::format("{:.4g}", c.c1) : fmt::format("({:.4g} + {:.4g}·i)", c.c1, c.c1_pair);
    s += fmt::format("{}{}: {:.4g}·u_{} + {}·u_{}·|φ|", s.empty() ? "" : "; ", to_string(t),
                     effective_c0(c, t), to_string(t), c1, to_string(c.angle_type));
  }
  const std::string_view scale = traits_of(v.family()).budget_scale;
  return scale.empty() ? s : fmt::format("{}  ({})", s, scale);
}

}  // namespace pe::harness
