// Per-job state of the host backend, found from any rank's device context: the ranks of
// a job are threads of this process sharing one set of heaps, so rank 0's heap base
// names the job. forget() drops every job's state as a new job starts (iris::run).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "iris/device/context.hpp"

namespace iris::host {

template <class T>
class JobTable {
 public:
  static T& of(const device::Context& ctx) {
    std::lock_guard<std::mutex> lock(mutex());
    auto& j = jobs()[ctx.heap_bases[0]];
    if (!j) j = std::make_unique<T>();
    return *j;
  }
  static void forget() {
    std::lock_guard<std::mutex> lock(mutex());
    jobs().clear();
  }

 private:
  static std::mutex& mutex() {
    static std::mutex mu;
    return mu;
  }
  static std::map<const char*, std::unique_ptr<T>>& jobs() {
    static std::map<const char*, std::unique_ptr<T>> all;
    return all;
  }
};

}  // namespace iris::host
