// Any two variants agree within the sum of their contracts: for every (family, layout, output type)
// every pair of registered instances is run on the same random inputs. No reference is needed, so
// every pair of variants is compared on every case.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <map>

#include "pe/harness/run.h"
#include "pe/pe.h"
#include "support/generators.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

// Instances sharing family, layout and output type.
struct Group {
  std::vector<Instance> members;
  std::string name() const { return members.front().test_name(); }
};

std::vector<Group> groups() {
  std::map<std::tuple<Family, Layout, DType>, Group> by_key;
  for (Family f : {Family::Sinusoidal, Family::Rope}) {
    for (const Instance& i : selected(f)) by_key[{f, i.layout, i.dtype}].members.push_back(i);
  }
  std::vector<Group> out;
  for (auto& [key, g] : by_key) {
    if (g.members.size() > 1) out.push_back(std::move(g));
  }
  return out;
}

void PrintTo(const Group& g, std::ostream* os) {
  *os << g.members.size() << " instances like " << g.members[0].name();
}

class Differential : public ::testing::TestWithParam<Group> {
 protected:
  const std::vector<Instance>& members() const { return GetParam().members; }
  std::int64_t max_position() const {
    std::int64_t m = members()[0].contract().max_position;
    for (const Instance& i : members()) m = std::min(m, i.contract().max_position);
    return m;
  }
  double max_input_abs() const {
    double m = members()[0].contract().max_input_abs;
    for (const Instance& i : members()) m = std::min(m, i.contract().max_input_abs);
    return m;
  }
};

// The budget needs |φ| only to its first digits: p·ω in double is within 2^-51 of it.
TEST_P(Differential, EveryPairOfVariantsAgreesWithinTheSumOfTheirContracts) {
  const bool rope = members()[0].variant->family() == Family::Rope;
  const DType dtype = members()[0].dtype;
  const Layout layout = members()[0].layout;
  PE_RC_CHECK("|y_A - y_B| <= budget_A + budget_B for every pair A, B", [&] {
    const std::int64_t dim = *gen_dim(rope ? 256 : 1024).as("dim");
    const double base = *gen_base().as("base");
    const auto positions = *gen_positions(max_position(), 3).as("positions");
    std::vector<std::vector<double>> ys;
    std::vector<double> x, phi;  // per element: the input pair's |a| + |b| (RoPE) and |φ|
    std::vector<std::size_t> pair;
    if (rope) {
      const RopePlan plan({dim, 0, base, layout});
      x = *gen_values(dtype, max_input_abs(), positions.size() * plan.head_dim()).as("x");
      for (const Instance& in : members()) {
        TypedBuffer b = buffer_of(dtype, x);
        run_rope(in, plan, positions, 1, b);
        ys.push_back(b.values());
      }
      std::vector<double> scale(x.size());
      phi.resize(x.size()), pair.resize(x.size());
      for (std::size_t t = 0; t < positions.size(); ++t) {
        for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
          const std::size_t i0 = t * plan.head_dim() + plan.pair_first(j), i1 = i0 + plan.pair_offset();
          for (std::size_t i : {i0, i1}) {
            phi[i] = static_cast<double>(positions[t]) * plan.inv_freq()[j];
            pair[i] = j;
            scale[i] = std::fabs(x[i0]) + std::fabs(x[i1]);
          }
        }
      }
      x = scale;
    } else {
      const SinusoidalPlan plan({dim, base, layout});
      for (const Instance& in : members()) ys.push_back(run_table(in, plan, positions).values());
      for (std::size_t r = 0; r < positions.size(); ++r) {
        for (std::size_t ch = 0; ch < plan.dim(); ++ch) {
          const std::size_t i = layout == Layout::Interleaved ? ch / 2 : ch % plan.n_pairs();
          phi.push_back(static_cast<double>(positions[r]) * plan.inv_freq()[i]);
          pair.push_back(i);
          x.push_back(1.0);
        }
      }
    }
    for (std::size_t a = 0; a < members().size(); ++a) {
      for (std::size_t b = a + 1; b < members().size(); ++b) {
        for (std::size_t i = 0; i < phi.size(); ++i) {
          const double tol = element_budget(members()[a].contract(), dtype, phi[i], pair[i], x[i]) +
                             element_budget(members()[b].contract(), dtype, phi[i], pair[i], x[i]);
          if (!(std::fabs(ys[a][i] - ys[b][i]) <= tol)) {
            RC_FAIL(
                fmt::format("{} = {:.17g} and {} = {:.17g} at element {} (|φ| {:.6g}): diff {:.3g} > {:.3g}",
                            members()[a].name(), ys[a][i], members()[b].name(), ys[b][i], i, phi[i],
                            std::fabs(ys[a][i] - ys[b][i]), tol));
          }
        }
      }
    }
  });
}

std::string group_name(const ::testing::TestParamInfo<Group>& group) { return group.param.name(); }

INSTANTIATE_TEST_SUITE_P(Registry, Differential, ::testing::ValuesIn(groups()), group_name);

}  // namespace
}  // namespace pe::testing
