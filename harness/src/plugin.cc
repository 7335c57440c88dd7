#include "pe/harness/plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>

#include "pe/plan.h"
#include "pe/plugin.h"
#include "plugin_variants.h"

namespace pe::harness {
namespace {

// What one plugin's entry registered: the host callbacks cannot throw through the plugin's C frames,
// so they keep the first refusal here and the loader throws it once the entry has returned.
struct Loading {
  std::vector<std::unique_ptr<Variant>> variants;
  std::string error, reported;
};

std::vector<std::string>& loaded() {
  static std::vector<std::string> paths;
  return paths;
}

// Contract::depends_on is a pointer: the plugin's string copied here, alive as long as the registry.
const char* interned(const char* s) {
  static std::deque<std::string> strings;
  return s == nullptr ? "" : strings.emplace_back(s).c_str();
}

// A PE_BIT set as values; "" or what is wrong with it.
template <class T, class Parse>
std::string bits_of(std::uint32_t mask, const char* field, Parse parse, const char* constants,
                    std::vector<T>& out) {
  for (std::uint32_t v = 0; v < 32; ++v) {
    if ((mask & (1u << v)) == 0) continue;
    const auto parsed = parse(v);
    if (!parsed) return fmt::format("contract.{}: bit {} names no {}", field, v, constants);
    out.push_back(*parsed);
  }
  return out.empty() ? fmt::format("contract.{} is empty (PE_BIT of at least one)", field) : "";
}

// The ABI's contract as pe::Contract, or why it is not a valid one.
std::string to_contract(const pe_contract& c, Family family, Contract& out) {
  if (auto e = bits_of(c.layouts, "layouts", detail::layout_of, "PE_LAYOUT_*", out.layouts); !e.empty())
    return e;
  for (Layout l : out.layouts) {
    if (!layout_belongs_to(l, family))
      return fmt::format("contract.layouts: {} is not a {} layout", to_string(l), to_string(family));
  }
  if (auto e = bits_of(c.outputs, "outputs", detail::dtype_of, "PE_DTYPE_*", out.outputs); !e.empty())
    return e;
  const struct {
    const char* field;
    std::uint32_t value;
    DType* to;
  } types[] = {{"angle_type", c.angle_type, &out.angle_type},
               {"compute_type", c.compute_type, &out.compute_type},
               {"table_type", c.table_type == 0 ? PE_DTYPE_F64 : c.table_type, &out.table_type}};
  for (const auto& t : types) {
    const auto d = detail::dtype_of(t.value);
    if (!d) return fmt::format("contract.{} is {}, not a PE_DTYPE_*", t.field, t.value);
    *t.to = *d;
  }
  if (c.max_position <= 0 || c.max_position > kMaxPosition)
    return fmt::format("contract.max_position must be in (0, 2^53], got {}", c.max_position);
  if (!(std::isfinite(c.max_base) && c.max_base > 1))
    return fmt::format("contract.max_base must be finite and > 1, got {}", c.max_base);
  if (!(std::isfinite(c.max_input_abs) && c.max_input_abs > 0))
    return fmt::format("contract.max_input_abs must be finite and > 0, got {}", c.max_input_abs);
  if (c.state_rows < 0) return fmt::format("contract.state_rows must be >= 0, got {}", c.state_rows);
  const std::pair<const char*, double> coefficients[] = {
      {"c0", c.c0},           {"ck", c.ck}, {"ct", c.ct},          {"c1", c.c1},
      {"c1_pair", c.c1_pair}, {"ca", c.ca}, {"c1_gain", c.c1_gain}};
  for (const auto& [field, v] : coefficients)
    if (!(std::isfinite(v) && v >= 0))
      return fmt::format("contract.{} must be finite and >= 0, got {}", field, v);
  out.max_position = c.max_position;
  out.max_base = c.max_base;
  out.max_input_abs = c.max_input_abs;
  out.state_rows = c.state_rows;
  out.c0 = c.c0, out.ck = c.ck, out.ct = c.ct, out.c1 = c.c1, out.c1_pair = c.c1_pair;
  out.ca = c.ca, out.c1_gain = c.c1_gain;
  out.depends_on = interned(c.depends_on);
  return "";
}

// The variant a kernel declares, or why it is refused ("" and a variant in `out`).
std::string to_variant(const pe_kernel& k, const Loading& loading, std::uint32_t abi_version,
                       std::unique_ptr<Variant>& out) {
  if (k.struct_size < sizeof(pe_kernel))
    return fmt::format("pe_kernel.struct_size is {}, ABI version 1's is {}", k.struct_size,
                       sizeof(pe_kernel));
  const detail::PluginFamily* row = detail::plugin_family(k.family);
  const std::string name = k.name == nullptr ? "" : k.name;
  const std::string which = name.empty() ? "a kernel without a name" : "kernel " + name;
  if (row == nullptr) {
    std::string known;
    for (const detail::PluginFamily& f : detail::plugin_families())
      known += (known.empty() ? "" : " or ") + std::string(f.c_name);
    return fmt::format("{}: family is {}, not {}", which, k.family, known);
  }
  if (!valid_variant_name(name, row->family))
    return fmt::format(
        "{}: the name '{}' is not {}.<backend>[@TARGET] (backend: lower-case letters, digits, '_')", which,
        name, to_string(row->family));
  if (std::any_of(loading.variants.begin(), loading.variants.end(),
                  [&](const auto& v) { return v->name() == name; }))
    return fmt::format("{}: registered twice (duplicate name)", which);
  if (const Variant* taken = find_variant(name))
    return fmt::format("{}: duplicate name, already registered by {}", which, variant_origin(*taken));
  if (const char* null_function = row->missing_function(k))
    return fmt::format("{}: null function pointer {}", which, null_function);
  Contract contract;
  if (auto e = to_contract(k.contract, row->family, contract); !e.empty()) return which + ": " + e;
  // pe_sinusoidal_plan (ABI v2) carries no switch, scale, pad or real position: the API refuses each.
  contract.table_switches = false;
  out = row->variant(name, std::move(contract), k, abi_version);
  return "";
}

int host_register_kernel(void* context, std::uint32_t abi_version, const pe_kernel* kernel) noexcept {
  auto& loading = *static_cast<Loading*>(context);
  if (!loading.error.empty()) return 1;
  try {
    // The version first: a kernel built for another ABI is not read at all.
    if (abi_version < 1 || abi_version > PE_PLUGIN_ABI_LATEST) {
      loading.error = fmt::format(
          "wrong ABI version: built for pe/plugin.h ABI version {}, this pe-suite reads version{} {}",
          abi_version, PE_PLUGIN_ABI_LATEST == 1 ? "" : "s 1 to", PE_PLUGIN_ABI_LATEST);
      return 1;
    }
    if (kernel == nullptr) {
      loading.error = "registered a null pe_kernel";
      return 1;
    }
    std::unique_ptr<Variant> v;
    loading.error = to_variant(*kernel, loading, abi_version, v);
    if (!loading.error.empty()) return 1;
    loading.variants.push_back(std::move(v));
    return 0;
  } catch (const std::exception& e) {
    loading.error = e.what();
    return 1;
  }
}

void host_report_error(void* context, const char* message) noexcept {
  auto& loading = *static_cast<Loading*>(context);
  try {
    if (loading.reported.empty() && message != nullptr) loading.reported = message;
  } catch (...) {  // out of memory: the return code still says the plugin refused
  }
}

}  // namespace

std::vector<std::string> load_plugin(const std::string& given) {
  std::error_code ec;
  const std::string path =
      std::filesystem::weakly_canonical(std::filesystem::absolute(given, ec), ec).string();
  const auto fail = [&](const std::string& why) {
    return PluginError(fmt::format("plugin {}: {}", path, why));
  };
  if (std::find(loaded().begin(), loaded().end(), path) != loaded().end()) return {};
  if (!std::filesystem::exists(path, ec)) throw fail("no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw fail("not a regular file");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw fail(fmt::format("dlopen failed: {}", why == nullptr ? "unknown error" : why));
  }
  // Never dlclose: once the entry has run, the plugin may have registered code with anything it
  // linked, and a refused plugin ends the process anyway.
  void* entry_symbol = dlsym(handle, PE_PLUGIN_ENTRY_NAME);
  if (entry_symbol == nullptr)
    throw fail("missing entry: exports no " PE_PLUGIN_ENTRY_NAME
               " (declare it with pe/plugin.h's PE_PLUGIN_EXPORT, with C linkage)");
  const auto entry = reinterpret_cast<pe_plugin_register_fn>(entry_symbol);
  Loading loading;
  const pe_host host{sizeof(pe_host), PE_PLUGIN_ABI_LATEST, &loading, host_register_kernel,
                     host_report_error};
  const int status = entry(&host);
  if (!loading.error.empty()) throw fail(loading.error);
  if (status != 0)
    throw fail(fmt::format(PE_PLUGIN_ENTRY_NAME " refused (returned {}){}", status,
                           loading.reported.empty() ? "" : ": " + loading.reported));
  if (loading.variants.empty()) throw fail(PE_PLUGIN_ENTRY_NAME " registered no kernel");
  std::vector<std::string> names;
  for (auto& v : loading.variants) {
    names.push_back(v->name());
    // Its origin is the plugin (pe::variant_origin; not pe::is_builtin): dladdr of the entry.
    if (const std::string error = register_variant(std::move(v), entry_symbol); !error.empty())
      throw fail(error);
  }
  loaded().push_back(path);
  return names;
}

void load_plugins_from_env() {
  const char* value = std::getenv(kPluginsEnv);
  if (value == nullptr) return;
  const std::string list = value;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    if (end > start) load_plugin(list.substr(start, end - start));
    start = end + 1;
  }
}

const std::vector<std::string>& loaded_plugins() { return loaded(); }

std::string kernel_origin_words(const Variant& variant) {
  return is_builtin(variant) ? "" : fmt::format("plugin {} kernel ", variant_origin(variant));
}

std::string plugins_env_value(const std::vector<std::string>& absolute_paths) {
  std::string value;
  for (const std::string& p : absolute_paths) {
    if (p.find(':') != std::string::npos)
      throw PluginError(fmt::format("plugin {}: a path with ':' cannot be passed on in ${}", p, kPluginsEnv));
    value += (value.empty() ? "" : ":") + p;
  }
  return value;
}

}  // namespace pe::harness
