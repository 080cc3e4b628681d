// Which backend libiris runs on (see backend.hpp): chosen once per process, by
// Options::backend through select(), or by IRIS_BACKEND, or by which GPUs are present.
#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>

#include "backend/backend.hpp"

namespace iris::backend {
namespace {

bool has_devices(Backend& b) {
  try {
    return b.device_count() > 0;
  } catch (const std::exception&) {
    return false;  // its driver or runtime library is missing, or finds no GPU
  }
}

// IRIS_BACKEND names one; unset or empty, the CUDA backend where an NVIDIA GPU is, else
// the HIP backend where an AMD GPU is, else CUDA (whose errors then say what is missing).
Backend* from_environment() {
  const char* name = secure_getenv("IRIS_BACKEND");
  const std::string n = name ? name : "";
  if (n == "host") return &host();
  if (n == "hip") return &hip();
  if (n == "cuda") return &cuda();
  if (!n.empty()) throw Error("IRIS_BACKEND=" + n + " names no backend (choose cuda, hip or host)");
  if (has_devices(cuda())) return &cuda();
  if (has_devices(hip())) return &hip();
  return &cuda();
}

std::atomic<Backend*>& chosen() {
  static std::atomic<Backend*> b{nullptr};
  return b;
}

}  // namespace

Backend& active() {
  Backend* b = chosen().load(std::memory_order_acquire);
  if (!b) {
    Backend* expected = nullptr;
    chosen().compare_exchange_strong(expected, from_environment());
    b = chosen().load(std::memory_order_acquire);
  }
  return *b;
}

void select(std::string_view name) {
  if (name.empty()) {
    chosen().store(from_environment());
  } else if (name == "cuda") {
    chosen().store(&cuda());
  } else if (name == "hip") {
    chosen().store(&hip());
  } else if (name == "host") {
    chosen().store(&host());
  } else {
    throw Error("unknown backend '" + std::string(name) + "' (choose cuda, hip or host; IRIS_BACKEND works the same)");
  }
}

}  // namespace iris::backend
