#include "pe/variant.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace pe {
namespace {

std::map<std::string, std::unique_ptr<Variant>, std::less<>>& storage() {
  static std::map<std::string, std::unique_ptr<Variant>, std::less<>> variants;
  return variants;
}

}  // namespace

Variant::Variant(std::string name, Family family, Contract contract)
    : name_(std::move(name)), family_(family), contract_(std::move(contract)) {}

bool valid_variant_name(std::string_view name, Family family) noexcept {
  const std::string_view prefix = to_string(family);
  if (name.size() <= prefix.size() + 1 || name.substr(0, prefix.size()) != prefix ||
      name[prefix.size()] != '.')
    return false;
  const std::string_view rest = name.substr(prefix.size() + 1);
  const std::size_t at = rest.find('@');
  const std::string_view backend = rest.substr(0, at);
  const auto lower = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; };
  const auto upper = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
  if (backend.empty() || !std::all_of(backend.begin(), backend.end(), lower)) return false;
  if (at == std::string_view::npos) return true;
  const std::string_view target = rest.substr(at + 1);
  return !target.empty() && std::all_of(target.begin(), target.end(), upper);
}

bool Variant::supports(Layout layout) const noexcept {
  // The de-interleaved form is the interleaved rotation with its output reordered by the RoPE driver:
  // the same arithmetic, so the same contract. It is not an instance layout of its own.
  if (layout == Layout::Deinterleave && family() == Family::Rope) layout = Layout::Interleaved;
  return std::find(contract_.layouts.begin(), contract_.layouts.end(), layout) != contract_.layouts.end();
}

bool Variant::supports(DType dtype) const noexcept {
  return std::find(contract_.outputs.begin(), contract_.outputs.end(), dtype) != contract_.outputs.end();
}

std::string Variant::instance_name(Layout layout) const {
  const std::string family(to_string(family_));
  return family + "." + std::string(to_string(layout)) + name_.substr(family.size());
}

const std::vector<const Variant*>& registry() {
  // Built once all static registrars have run (registry() is never called during static init).
  static const std::vector<const Variant*> sorted = [] {
    std::vector<const Variant*> v;
    for (const auto& [name, variant] : storage()) v.push_back(variant.get());
    return v;
  }();
  return sorted;
}

const Variant* find_variant(std::string_view name) {
  const auto it = storage().find(name);
  return it == storage().end() ? nullptr : it->second.get();
}

Registrar::Registrar(std::unique_ptr<Variant> variant) {
  const std::string name = variant->name();
  if (!valid_variant_name(name, variant->family())) {
    std::fprintf(stderr, "pe-suite: variant name %s is not <%s>.<backend>[@TARGET]\n", name.c_str(),
                 std::string(to_string(variant->family())).c_str());
    std::abort();
  }
  if (!storage().emplace(name, std::move(variant)).second) {
    std::fprintf(stderr, "pe-suite: variant %s registered twice\n", name.c_str());
    std::abort();
  }
}

}  // namespace pe
