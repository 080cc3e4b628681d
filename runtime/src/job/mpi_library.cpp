// Loads OpenMPI's library and its entry points (see mpi_library.hpp).
#include "job/mpi_library.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "iris/error.hpp"

namespace iris::mpi {
namespace {

#define IRIS_MPI_STRINGIZE2(x) #x
#define IRIS_MPI_STRINGIZE(x) IRIS_MPI_STRINGIZE2(x)

// OpenMPI 4 and 5 both use this soname; the GPU machines run OpenMPI 4.1.
constexpr const char* kDefaultLibrary = "libmpi.so.40";

struct Loaded {
  Api api;
  std::string error;  // empty when usable
};

Loaded load() {
  Loaded out;
  // secure_getenv: under setuid/setgid the caller's environment must not pick the
  // library this process loads (it reads as unset there).
  const char* override_path = secure_getenv("IRIS_MPI_LIBRARY");
  const bool overridden = override_path && *override_path;
  const std::string path = overridden ? override_path : kDefaultLibrary;
  // RTLD_GLOBAL: OpenMPI loads its components (mca_*.so) with dlopen, and they resolve
  // OpenMPI's own symbols from the global namespace. A program that links libmpi
  // itself gets the same, already loaded, library back.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char* why = dlerror();
    out.error = "this process was started by mpirun, but the MPI library could not be loaded (" + path + ": " +
                (why ? why : "unknown error") + "); libiris reaches OpenMPI 4 or newer at run time: " +
                (overridden ? std::string("check IRIS_MPI_LIBRARY")
                            : std::string("install it (Debian/Ubuntu: openmpi-bin) or set IRIS_MPI_LIBRARY to the "
                                          "path of its libmpi.so.40")) +
                ", or run without mpirun (threads mode)";
    return out;
  }
  std::string missing;
#define IRIS_MPI_FUNCTION(name)                                                                  \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(lib, IRIS_MPI_STRINGIZE(name))); \
  if (!out.api.name && missing.empty()) missing = IRIS_MPI_STRINGIZE(name);
#define IRIS_MPI_OBJECT(type, member, symbol)                                  \
  out.api.member = static_cast<type>(dlsym(lib, IRIS_MPI_STRINGIZE(symbol))); \
  if (!out.api.member && missing.empty()) missing = IRIS_MPI_STRINGIZE(symbol);
#include "job/mpi_library.def"
  if (!missing.empty()) {
    out.error = "the MPI library " + path + " lacks " + missing +
                ": libiris needs OpenMPI 4 or newer (libmpi.so.40); set IRIS_MPI_LIBRARY to OpenMPI's library";
  }
  return out;
}

std::atomic<const Loaded*> g_loaded{nullptr};

}  // namespace

const Api& api() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) throw Error(loaded.error);
  g_loaded.store(&loaded, std::memory_order_release);
  return loaded.api;
}

const Api* loaded_api() {
  const Loaded* loaded = g_loaded.load(std::memory_order_acquire);
  return loaded ? &loaded->api : nullptr;
}

}  // namespace iris::mpi
