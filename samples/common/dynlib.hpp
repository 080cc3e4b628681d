// Loading a vendor library at run time (dlopen), so that binaries build and run
// without it and say plainly why a baseline is missing.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace iris::samples {

// The library named by $env, else the first of `names` the loader finds; nullptr with
// `why` set when none loads.
inline void* open_first(const char* env, std::initializer_list<const char*> names, std::string* why) {
  std::string tried;
  if (const char* path = std::getenv(env); path && *path) {
    if (void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return h;
    *why = std::string(env) + "=" + path + ": " + dlerror();
    return nullptr;
  }
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
    tried += (tried.empty() ? "" : ", ") + std::string(n);
  }
  *why = "cannot load " + tried + " (set " + env + " or LD_LIBRARY_PATH)";
  return nullptr;
}

// A symbol as a function pointer; a missing one sets `why` (first miss only).
template <class F>
F sym(void* lib, const char* name, std::string* why) {
  void* p = dlsym(lib, name);
  if (!p && why->empty()) *why = std::string("missing symbol ") + name;
  return reinterpret_cast<F>(p);
}

}  // namespace iris::samples
