#include "pe/harness/instance.h"

#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "pe/harness/census.h"
#include "pe/harness/shard.h"

namespace pe::harness {

std::string Instance::name() const {
  return variant->instance_name(layout) + "/" + std::string(to_string(dtype));
}

std::string test_identifier(std::string s) {
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

std::string Instance::test_name() const { return test_identifier(name()); }

std::vector<Instance> instances(Family family) {
  std::vector<Instance> out;
  for (const Variant* v : registry()) {
    if (v->family() != family) continue;
    for (Layout l : v->contract().layouts) {
      for (DType t : v->contract().outputs) out.push_back({v, l, t});
    }
  }
  return out;
}

bool glob_match(const std::string& pattern, const std::string& text) {
  std::size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++, mark = t;
    } else if (star != std::string::npos) {
      p = star + 1, t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

// $PE_SHARD as (I, N); (0, 1) when unset. A malformed value is refused, never read as "every instance".
std::pair<std::size_t, std::size_t> this_shard() {
  const char* text = std::getenv("PE_SHARD");
  if (text == nullptr || *text == '\0') return {0, 1};
  const auto parsed = census::parse_shard(text);
  if (!parsed)
    throw std::invalid_argument(std::string("PE_SHARD: expected I/N with I < N (digits only), got '") + text +
                                "'");
  return *parsed;
}

}  // namespace

bool in_this_shard(const std::string& key) {
  const auto [index, count] = this_shard();
  return count == 1 || census::shard_of(key, count) == index;
}

std::vector<Instance> selected() {
  std::vector<Instance> out = selected_unsharded();
  std::erase_if(out, [](const Instance& i) { return !in_this_shard(i.name()); });
  return out;
}

std::vector<Instance> selected_unsharded() {
  const char* glob = std::getenv("PE_VARIANT");
  // "@outside": the variants an outside binary or plugin registered (pe_add_variant_suite's default).
  const bool outside = glob != nullptr && std::string_view(glob) == kOutside;
  std::vector<Instance> out;
  for (const Variant* v : registry()) {
    if (outside && is_builtin(*v)) continue;
    for (Layout l : v->contract().layouts) {
      for (DType t : v->contract().outputs) {
        const Instance i{v, l, t};
        if (outside || glob == nullptr || glob_match(glob, v->name()) || glob_match(glob, i.name()))
          out.push_back(i);
      }
    }
  }
  return out;
}

std::vector<Instance> selected(Family family) {
  std::vector<Instance> out = selected();
  std::erase_if(out, [family](const Instance& i) { return i.variant->family() != family; });
  return out;
}

std::vector<Instance> instances_matching(const std::string& glob) {
  std::vector<Instance> out;
  for (const FamilyInfo& f : families()) {
    for (const Instance& i : instances(f.family)) {
      if (glob == kOutside ? !is_builtin(*i.variant)
                           : glob_match(glob, i.variant->name()) || glob_match(glob, i.name()))
        out.push_back(i);
    }
  }
  return out;
}

}  // namespace pe::harness
