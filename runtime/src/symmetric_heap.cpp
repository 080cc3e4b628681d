// Allocation and cross-rank mapping of the symmetric heap (see symmetric_heap.hpp).
#include "symmetric_heap.hpp"

#include <string>

#include "backend/cuda/cuda_driver.hpp"
#include "bootstrap.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "iris/size.hpp"

namespace iris {
namespace {

void require_peer_access(int from, int to) {
  const auto& cu = cuda::driver();
  CUdevice a, b;
  IRIS_CU(cuDeviceGet(&a, from));
  IRIS_CU(cuDeviceGet(&b, to));
  int can = 0;
  IRIS_CU(cuDeviceCanAccessPeer(&can, a, b));
  if (!can) {
    throw Error("GPU " + std::to_string(from) + " cannot access GPU " + std::to_string(to) +
                " (no peer access): the symmetric heap needs NVLink or PCIe peer-to-peer between all GPUs");
  }
  int atomics = 0;
  cu.cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, a, b);
  if (!atomics) {
    log_warn("GPU ", from, " -> GPU ", to, ": no native peer atomics; remote atomics may be slow or unsupported");
  }
}

}  // namespace

SymmetricHeap::SymmetricHeap(Bootstrap& boot, std::size_t bytes, const std::vector<int>& devices)
    : bytes_(bytes), bases_(static_cast<std::size_t>(boot.world()), nullptr) {
  const auto& cu = cuda::driver();
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

  CUdeviceptr dptr = 0;
  CUresult rc = cu.cuMemAlloc(&dptr, bytes);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_b = 0, total_b = 0;
    cu.cuMemGetInfo(&free_b, &total_b);
    throw Error("cannot allocate a symmetric heap of " + format_bytes(bytes) + " on GPU " +
                std::to_string(devices[static_cast<std::size_t>(me)]) + ": " + format_bytes(free_b) +
                " free of " + format_bytes(total_b));
  }
  cuda::check(rc, "cuMemAlloc(symmetric heap)");
  local_ = reinterpret_cast<char*>(dptr);
  IRIS_CU(cuMemsetD8(dptr, 0, bytes));

  if (boot.single_process()) {
    std::vector<unsigned long long> ptrs(static_cast<std::size_t>(boot.world()));
    unsigned long long p = dptr;
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
      CUdevice d;
      IRIS_CU(cuDeviceGet(&d, peer_dev));
      CUcontext peer_ctx;
      IRIS_CU(cuDevicePrimaryCtxRetain(&peer_ctx, d));
      retained_peer_devices_.push_back(peer_dev);
      CUresult e = cu.cuCtxEnablePeerAccess(peer_ctx, 0);
      if (e != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) cuda::check(e, "cuCtxEnablePeerAccess");
    }
  } else {
    CUipcMemHandle handle;
    IRIS_CU(cuIpcGetMemHandle(&handle, dptr));
    std::vector<CUipcMemHandle> handles(static_cast<std::size_t>(boot.world()));
    boot.allgather(&handle, handles.data(), sizeof handle);
    for (int r = 0; r < boot.world(); ++r) {
      if (r == me) {
        bases_[static_cast<std::size_t>(r)] = local_;
        continue;
      }
      if (devices[static_cast<std::size_t>(r)] != devices[static_cast<std::size_t>(me)]) {
        require_peer_access(devices[static_cast<std::size_t>(me)], devices[static_cast<std::size_t>(r)]);
      }
      CUdeviceptr peer = 0;
      IRIS_CU(cuIpcOpenMemHandle(&peer, handles[static_cast<std::size_t>(r)], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
      bases_[static_cast<std::size_t>(r)] = reinterpret_cast<char*>(peer);
      ipc_opened_.push_back(reinterpret_cast<char*>(peer));
    }
  }
  log_info("symmetric heap: ", format_bytes(bytes), " at ", static_cast<void*>(local_), " (", boot.name(), ")");
}

SymmetricHeap::~SymmetricHeap() {
  const auto& cu = cuda::driver();
  for (char* p : ipc_opened_) cu.cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(p));
  if (local_) cu.cuMemFree(reinterpret_cast<CUdeviceptr>(local_));
  for (int dev : retained_peer_devices_) {
    CUdevice d;
    if (cu.cuDeviceGet(&d, dev) == CUDA_SUCCESS) cu.cuDevicePrimaryCtxRelease(d);
  }
}

}  // namespace iris
