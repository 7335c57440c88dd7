#include "pe/variant.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace pe {
namespace {

struct Entry {
  std::unique_ptr<Variant> variant;
  std::string origin;  // the file that registered it
};

std::map<std::string, Entry, std::less<>>& storage() {
  static std::map<std::string, Entry, std::less<>> variants;
  return variants;
}

bool& registry_stale() {
  static bool stale = true;
  return stale;
}

// The shared library or executable holding `address`; "" when the loader cannot tell.
std::string module_of(const void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

const std::string& libpe_path() {
  static const std::string path = module_of(reinterpret_cast<const void*>(&registry));
  return path;
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
  // Rebuilt after a registration: the static registrars run before main, a plugin's when it is loaded.
  static std::vector<const Variant*> sorted;
  if (registry_stale()) {
    sorted.clear();
    for (const auto& [name, entry] : storage()) sorted.push_back(entry.variant.get());
    registry_stale() = false;
  }
  return sorted;
}

const Variant* find_variant(std::string_view name) {
  const auto it = storage().find(name);
  return it == storage().end() ? nullptr : it->second.variant.get();
}

const std::string& variant_origin(const Variant& v) {
  static const std::string unknown;
  const auto it = storage().find(v.name());
  return it == storage().end() ? unknown : it->second.origin;
}

bool is_builtin(const Variant& v) { return v.builtin_; }

std::string register_variant(std::unique_ptr<Variant> variant, const void* where) {
  const std::string name = variant->name();
  if (!valid_variant_name(name, variant->family()))
    return "variant name '" + name + "' is not <" + std::string(to_string(variant->family())) +
           ">.<backend>[@TARGET] (backend: lower-case letters, digits, '_')";
  std::string origin = where == nullptr ? libpe_path() : module_of(where);
  if (storage().count(name) > 0)
    return "variant " + name + " is already registered (by " + storage().find(name)->second.origin + ")";
  variant->builtin_ = origin == libpe_path();
  storage().emplace(name, Entry{std::move(variant), std::move(origin)});
  registry_stale() = true;
  return "";
}

Registrar::Registrar(std::unique_ptr<Variant> variant, const void* where) {
  if (const std::string error = register_variant(std::move(variant), where); !error.empty()) {
    std::fprintf(stderr, "pe-suite: %s\n", error.c_str());
    std::abort();
  }
}

}  // namespace pe
