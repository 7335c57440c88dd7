// Loading C plugins (pe/plugin.h): dlopen a shared library, call its pe_plugin_register, validate
// every kernel it declares and register each as a variant beside the built-in ones. pe-suite loads
// them from --plugin and $PE_PLUGINS; the property and benchmark binaries (pe-suite's own and those
// pe_add_variant_suite builds) from $PE_PLUGINS, before their registries are read.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "pe/variant.h"

namespace pe::harness {

// The environment variable naming plugins to load: absolute paths separated by ':'.
inline constexpr const char* kPluginsEnv = "PE_PLUGINS";

// Why a plugin was refused; the message starts with "plugin <absolute path>: ".
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads one plugin and registers its kernels; returns their names. Loading the same file again does
// nothing (returns no names). Throws PluginError naming the path and the reason: no such file, dlopen's
// error, no entry, another ABI version, the entry refusing, no kernel, or a kernel with a null function,
// a malformed or taken name or an invalid contract. A plugin is never unloaded.
std::vector<std::string> load_plugin(const std::string& path);

// Every plugin in $PE_PLUGINS (none when unset or empty), in order.
void load_plugins_from_env();

// The plugins loaded so far, as absolute paths in load order.
const std::vector<std::string>& loaded_plugins();

// "plugin /abs/libmine.so kernel " for a kernel registered outside libpe (a plugin, an outside project's
// binary), "" for libpe's own: what a failure puts before the kernel's name, so the user knows whose it is.
std::string kernel_origin_words(const Variant& variant);

// Paths as $PE_PLUGINS writes them: absolute, joined by ':'.
std::string plugins_env_value(const std::vector<std::string>& absolute_paths);

}  // namespace pe::harness
