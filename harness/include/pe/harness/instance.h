// An instance is one (variant, layout, output type) the variant's contract covers. Properties are
// instantiated over every instance of the registry, so a new variant is tested without edits here.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "pe/variant.h"

namespace pe::harness {

struct Instance {
  const Variant* variant = nullptr;
  Layout layout = Layout::Interleaved;
  DType dtype = DType::F32;

  const Contract& contract() const { return variant->contract(); }
  // "sinusoidal.interleaved.scalar_f32/f32"
  std::string name() const;
  // The same, with every character GoogleTest does not allow in a name replaced by '_'.
  std::string test_name() const;
};

// GoogleTest prints a failing parameter by its name.
inline void PrintTo(const Instance& i, std::ostream* os) { *os << i.name(); }

std::vector<Instance> instances(Family family);
// The selection that stands for every variant not built into libpe (an outside project's, a plugin's):
// pe_add_variant_suite's default, in $PE_VARIANT and as pe_bench's --variant.
inline constexpr const char* kOutside = "@outside";
// instances(family) that match the glob in $PE_VARIANT (every one when unset): the property suites
// instantiate these, so `pe-suite verify --variant GLOB` runs the property binary on a selection.
std::vector<Instance> selected(Family family);
// The same over every family.
std::vector<Instance> selected();
// $PE_SHARD ("I/N", set by pe-suite verify --shard) keeps, of the instances above, those whose
// census::shard_of(name, N) is I. A property over a group of instances selects them unsharded and keeps
// the groups in_this_shard(group key), so that a group is never split between shards.
std::vector<Instance> selected_unsharded();
bool in_this_shard(const std::string& key);
// Instances whose name matches a glob ('*' and '?'), on the variant name or the instance name; or
// kOutside.
std::vector<Instance> instances_matching(const std::string& glob);
bool glob_match(const std::string& pattern, const std::string& text);
// `s` with every character but letters and digits as '_': a gtest name (Instance::test_name).
std::string test_identifier(std::string s);

}  // namespace pe::harness
