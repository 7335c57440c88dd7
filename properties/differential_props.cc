// Any two variants agree within the sum of their contracts: for every (family, layout, output type)
// every pair of registered instances is run on the same random inputs. No reference is needed, so
// every pair of variants is compared on every case.

#include <map>

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
  for (const Instance& i : harness::selected_unsharded())
    by_key[{i.variant->family(), i.layout, i.dtype}].members.push_back(i);
  std::vector<Group> out;
  for (auto& [key, g] : by_key) {
    // A sharded run ($PE_SHARD) keeps each group whole, in the shard of its test's name.
    if (g.members.size() > 1 && harness::in_this_shard("group " + g.name())) out.push_back(std::move(g));
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
  const harness::FamilyTraits& family = harness::traits_of(members()[0].variant->family());
  const DType dtype = members()[0].dtype;
  const Layout layout = members()[0].layout;
  PE_RC_CHECK("|y_A - y_B| <= budget_A + budget_B for every pair A, B", [&] {
    const std::int64_t dim = *gen_dim(family.property_max_dim).as("dim");
    const double base = *gen_base().as("base");
    const auto positions = *gen_positions(max_position(), 3).as("positions");
    const std::size_t size = positions.size() * static_cast<std::size_t>(dim);
    std::vector<double> x(size);
    if (family.reads_data) x = *gen_values(dtype, max_input_abs(), size).as("x");
    std::vector<std::vector<double>> ys;
    for (const Instance& in : members()) {
      TypedBuffer b = buffer_of(dtype, x);
      family.call(*in.variant, layout, dim, base, positions, b.view(), 1);
      ys.push_back(b.values());
    }
    const auto terms = family.budget_terms(layout, dim, base, positions, 1, x);
    for (std::size_t a = 0; a < members().size(); ++a) {
      for (std::size_t b = a + 1; b < members().size(); ++b) {
        for (std::size_t i = 0; i < size; ++i) {
          const auto& [phi, pair, scale] = terms[i];
          const double tol = element_budget(members()[a].contract(), dtype, phi, pair, scale) +
                             element_budget(members()[b].contract(), dtype, phi, pair, scale);
          if (!(ys[a][i] == ys[b][i] || std::fabs(ys[a][i] - ys[b][i]) <= tol)) {  // == : one infinity
            RC_FAIL(
                fmt::format("{} = {:.17g} and {} = {:.17g} at element {} (|φ| {:.6g}): diff {:.3g} > {:.3g}",
                            members()[a].name(), ys[a][i], members()[b].name(), ys[b][i], i, phi,
                            std::fabs(ys[a][i] - ys[b][i]), tol));
          }
        }
      }
    }
  });
}

std::string group_name(const ::testing::TestParamInfo<Group>& group) { return group.param.name(); }

// Empty when $PE_VARIANT selects no instance of it: allowed, not a failure.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Differential);
INSTANTIATE_TEST_SUITE_P(Registry, Differential, ::testing::ValuesIn(groups()), group_name);

}  // namespace
}  // namespace pe::testing
