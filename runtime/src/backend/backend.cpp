// Which backend libiris runs on (see backend.hpp): chosen once per process, by
// Options::backend through select(), or by IRIS_BACKEND.
#include <atomic>
#include <cstdlib>
#include <string>

#include "backend/backend.hpp"

namespace iris::backend {
namespace {

Backend* from_environment() {
  const char* name = secure_getenv("IRIS_BACKEND");
  if (name && std::string(name) == "host") return &host();
  if (name && std::string(name) == "hip") return &hip();
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
