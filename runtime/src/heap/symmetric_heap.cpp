// Allocation and cross-rank mapping of the symmetric heap (see symmetric_heap.hpp).
#include "heap/symmetric_heap.hpp"

#include <cstdint>
#include <string>

#include "backend/backend.hpp"
#include "job/bootstrap.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "iris/size.hpp"

namespace iris {
namespace {

void require_peer_access(int from, int to) {
  auto& bk = backend::active();
  if (!bk.can_access_peer(from, to)) {
    throw Error("GPU " + std::to_string(from) + " cannot access GPU " + std::to_string(to) +
                " (no peer access): the symmetric heap needs NVLink or PCIe peer-to-peer between all GPUs");
  }
  if (!bk.peer_native_atomics(from, to)) {
    log_warn("GPU ", from, " -> GPU ", to, ": no native peer atomics; remote atomics may be slow or unsupported");
  }
}

}  // namespace

SymmetricHeap::SymmetricHeap(Bootstrap& boot, std::size_t bytes, const std::vector<int>& devices)
    : bytes_(bytes), bases_(static_cast<std::size_t>(boot.world()), nullptr) {
  auto& bk = backend::active();
  const int me = boot.rank();
  // Every rank must ask for the same size: offsets mean the same thing everywhere.
  std::vector<unsigned long long> sizes(static_cast<std::size_t>(boot.world()));
  unsigned long long mine = bytes;
  boot.allgather(&mine, sizes.data(), sizeof mine);
  for (int r = 0; r < boot.world(); ++r) {
    if (sizes[static_cast<std::size_t>(r)] != mine) {
      throw Error("ranks disagree on the heap size: rank " + std::to_string(me) + " has " + format_bytes(mine) +
                  ", rank " + std::to_string(r) + " has " + format_bytes(sizes[static_cast<std::size_t>(r)]));
    }
  }

  void* dptr = bk.mem_alloc(bytes);
  if (!dptr) {
    const backend::MemoryInfo info = bk.memory_info();
    throw Error("cannot allocate a symmetric heap of " + format_bytes(bytes) + " on GPU " +
                std::to_string(devices[static_cast<std::size_t>(me)]) + ": " + format_bytes(info.free) +
                " free of " + format_bytes(info.total));
  }
  local_ = static_cast<char*>(dptr);
  bk.memset(dptr, 0, bytes);

  if (boot.single_process()) {
    std::vector<unsigned long long> ptrs(static_cast<std::size_t>(boot.world()));
    unsigned long long p = reinterpret_cast<std::uintptr_t>(dptr);
    boot.allgather(&p, ptrs.data(), sizeof p);
    const int my_dev = devices[static_cast<std::size_t>(me)];
    for (int r = 0; r < boot.world(); ++r) {
      bases_[static_cast<std::size_t>(r)] = reinterpret_cast<char*>(ptrs[static_cast<std::size_t>(r)]);
      const int peer_dev = devices[static_cast<std::size_t>(r)];
      if (peer_dev == my_dev) continue;
      bool done = false;
      for (int q = 0; q < r; ++q) done |= devices[static_cast<std::size_t>(q)] == peer_dev;
      if (done) continue;
      require_peer_access(my_dev, peer_dev);
      DriverContextHandle* peer_ctx = bk.retain_primary_context(peer_dev);
      retained_peer_devices_.push_back(peer_dev);
      bk.enable_peer_access(peer_ctx);
    }
  } else {
    const backend::IpcMemHandle handle = bk.ipc_export(dptr);
    std::vector<backend::IpcMemHandle> handles(static_cast<std::size_t>(boot.world()));
    boot.allgather(&handle, handles.data(), sizeof handle);
    for (int r = 0; r < boot.world(); ++r) {
      if (r == me) {
        bases_[static_cast<std::size_t>(r)] = local_;
        continue;
      }
      if (devices[static_cast<std::size_t>(r)] != devices[static_cast<std::size_t>(me)]) {
        require_peer_access(devices[static_cast<std::size_t>(me)], devices[static_cast<std::size_t>(r)]);
      }
      char* peer = static_cast<char*>(bk.ipc_open(handles[static_cast<std::size_t>(r)]));
      bases_[static_cast<std::size_t>(r)] = peer;
      ipc_opened_.push_back(peer);
    }
  }
  log_info("symmetric heap: ", format_bytes(bytes), " at ", static_cast<void*>(local_), " (", boot.name(), ")");
}

SymmetricHeap::~SymmetricHeap() {
  auto& bk = backend::active();
  for (char* p : ipc_opened_) bk.ipc_close(p);
  if (local_) bk.mem_free(local_);
  for (int dev : retained_peer_devices_) bk.release_primary_context(dev);
}

}  // namespace iris
