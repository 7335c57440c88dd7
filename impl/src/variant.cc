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

Variant::Variant(std::string name, Contract contract)
    : name_(std::move(name)), contract_(std::move(contract)) {}

bool Variant::supports(Layout layout) const noexcept {
  return std::find(contract_.layouts.begin(), contract_.layouts.end(), layout) != contract_.layouts.end();
}

bool Variant::supports(DType dtype) const noexcept {
  return std::find(contract_.outputs.begin(), contract_.outputs.end(), dtype) != contract_.outputs.end();
}

std::string Variant::instance_name(Layout layout) const {
  const std::string family(to_string(contract_.family));
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
  if (!storage().emplace(name, std::move(variant)).second) {
    std::fprintf(stderr, "pe-suite: variant %s registered twice\n", name.c_str());
    std::abort();
  }
}

}  // namespace pe
