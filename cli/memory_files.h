// Arrays and texts held in memory that stand where the CLI reads files: the Python module's numpy
// arrays, position lists and config dicts reach `check` through the same readers (read_npy,
// read_text, read_hf_config), so one code path gives the same checks, words and errors. Thread-local
// and scoped: outside a MemoryFiles scope every read goes to the file system.
#pragma once

#include <map>
#include <string>

#include "npy.h"

namespace pe::cli {

struct MemoryFiles {
  std::map<std::string, NpyArray> arrays;
  std::map<std::string, std::string> texts;
};

inline const MemoryFiles*& active_memory_files() {
  thread_local const MemoryFiles* files = nullptr;
  return files;
}

// While alive, `files` answers reads of its names before the file system.
class MemoryFilesScope {
 public:
  explicit MemoryFilesScope(const MemoryFiles& files) : previous_(active_memory_files()) {
    active_memory_files() = &files;
  }
  ~MemoryFilesScope() { active_memory_files() = previous_; }
  MemoryFilesScope(const MemoryFilesScope&) = delete;
  MemoryFilesScope& operator=(const MemoryFilesScope&) = delete;

 private:
  const MemoryFiles* previous_;
};

inline const NpyArray* memory_array(const std::string& path) {
  const MemoryFiles* f = active_memory_files();
  if (f == nullptr) return nullptr;
  const auto it = f->arrays.find(path);
  return it == f->arrays.end() ? nullptr : &it->second;
}

inline const std::string* memory_text(const std::string& path) {
  const MemoryFiles* f = active_memory_files();
  if (f == nullptr) return nullptr;
  const auto it = f->texts.find(path);
  return it == f->texts.end() ? nullptr : &it->second;
}

}  // namespace pe::cli
