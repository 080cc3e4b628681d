// The HIP backend (see backend/backend.hpp) on the dlopen'd runtime table of
// hip_runtime.hpp, for AMD GPUs. Streams, events, modules, functions and graphs are the
// runtime's own handles, cast. HIP's context API (hipCtx*, hipDevicePrimaryCtx*) is
// deprecated and its primary context lives as long as the process, so a
// DriverContextHandle* here is not a hipCtx_t: it holds the device ordinal plus one,
// and making it current is hipSetDevice, HIP's per-thread current device.
//
// Built and checked without an AMD GPU: every call below follows ROCm 5.2's and 6.x's
// headers, and none has run on a device yet (docs/amd.md, "The HIP runtime backend").
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/hip/hip_abi.hpp"
#include "backend/hip/hip_runtime.hpp"
#include "kernels/amdgpu_images.hpp"

namespace iris::backend {
namespace {

using namespace iris::hip;

hipStream_t hs(StreamHandle* s) { return reinterpret_cast<hipStream_t>(s); }
hipFunction_t hs(FunctionHandle* f) { return reinterpret_cast<hipFunction_t>(f); }
hipEvent_t hs(EventHandle* e) { return reinterpret_cast<hipEvent_t>(e); }
hipGraphExec_t hs(GraphExecHandle* g) { return reinterpret_cast<hipGraphExec_t>(g); }
hipGraph_t hs(GraphHandle* g) { return reinterpret_cast<hipGraph_t>(g); }
hipModule_t hs(ModuleHandle* m) { return reinterpret_cast<hipModule_t>(m); }
void* dptr(const void* p) { return const_cast<void*>(p); }

DriverContextHandle* context_of(int device) {
  return reinterpret_cast<DriverContextHandle*>(static_cast<std::uintptr_t>(device) + 1);
}
int device_of(DriverContextHandle* context) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(context) - 1); }

// Calls a runtime entry point; a failure throws iris::Error("<name> failed: ...").
#define HIP_CALL(fn, ...) ::iris::hip::check(::iris::hip::runtime().fn(__VA_ARGS__), #fn)

class HipBackend final : public Backend {
 public:
  const char* name() const override { return "hip"; }
  void require() override { runtime(); }

  int device_count() override {
    int n = 0;
    HIP_CALL(hipGetDeviceCount, &n);
    return n;
  }

  std::string device_name(int device) override {
    char name[256] = {0};
    HIP_CALL(hipDeviceGetName, name, sizeof name - 1, device);
    return name;
  }

  // AMD GPUs have no compute capability: both report 0, so nothing that keys NVIDIA
  // features on it (target_for_compute_capability, tests of major == 9) mistakes a
  // gfx9 GPU for Hopper. The architecture is device_arch's gfx name.
  int device_attribute(int device, DeviceAttribute attribute) override {
    switch (attribute) {
      case DeviceAttribute::multiprocessors: {
        int cus = 0;
        HIP_CALL(hipDeviceGetAttribute, &cus, kAttributeMultiprocessorCount, device);
        return cus;
      }
      case DeviceAttribute::compute_capability_major:
      case DeviceAttribute::compute_capability_minor: return 0;
    }
    return 0;
  }

  // gcnArchName from hipDeviceProp_t, whose layout ROCm 6.0 changed (hip_abi.hpp):
  // ROCm 6's hipGetDevicePropertiesR0600 where the runtime has it, else ROCm 5's
  // hipGetDeviceProperties. Offsets checked against ROCm 5.2's and 6.x's headers only.
  std::string device_arch(int device) override {
    const RuntimeApi& api = runtime();
    std::vector<char> props(kDevicePropBufferBytes, '\0');
    std::size_t offset = 0;
    if (api.hipGetDevicePropertiesR0600) {
      check(api.hipGetDevicePropertiesR0600(props.data(), device), "hipGetDevicePropertiesR0600");
      offset = kGcnArchNameOffsetR0600;
    } else if (api.hipGetDeviceProperties) {
      check(api.hipGetDeviceProperties(props.data(), device), "hipGetDeviceProperties");
      offset = kGcnArchNameOffsetR0000;
    } else {
      throw Error("the HIP runtime in " + api.path + " has neither hipGetDevicePropertiesR0600 nor "
                  "hipGetDeviceProperties: libiris cannot read GPU " + std::to_string(device) + "'s architecture");
    }
    const char* at = props.data() + offset;
    const std::string arch(at, strnlen(at, kGcnArchNameBytes));
    if (arch.rfind("gfx", 0) != 0) {
      throw Error("the HIP runtime in " + api.path + " (HIP " + version_text(api.version) + ") gave '" + arch +
                  "' as GPU " + std::to_string(device) +
                  "'s architecture name, not a gfx name: its hipDeviceProp_t layout is not one libiris knows "
                  "(ROCm 5 or 6)");
    }
    return arch;
  }

  bool can_access_peer(int device, int peer) override {
    int can = 0;
    HIP_CALL(hipDeviceCanAccessPeer, &can, device, peer);
    return can != 0;
  }

  bool peer_native_atomics(int device, int peer) override {
    const RuntimeApi& api = runtime();
    if (!api.hipDeviceGetP2PAttribute) return false;
    int atomics = 0;
    if (api.hipDeviceGetP2PAttribute(&atomics, kP2PNativeAtomicSupported, device, peer) != hipSuccess) return false;
    return atomics != 0;
  }

  DriverContextHandle* retain_primary_context(int device) override {
    const int n = device_count();
    if (device < 0 || device >= n) {
      throw Error("retain_primary_context: device " + std::to_string(device) + " is not one of the " +
                  std::to_string(n) + " HIP device(s)");
    }
    return context_of(device);
  }

  void release_primary_context(int) noexcept override {}

  void set_current_context(DriverContextHandle* context) override { HIP_CALL(hipSetDevice, device_of(context)); }

  void enable_peer_access(DriverContextHandle* peer) override {
    const hipError_t e = runtime().hipDeviceEnablePeerAccess(device_of(peer), 0);
    if (e != hipErrorPeerAccessAlreadyEnabled) check(e, "hipDeviceEnablePeerAccess");
  }

  void synchronize() override { HIP_CALL(hipDeviceSynchronize); }

  void* mem_alloc(std::size_t bytes) override {
    void* p = nullptr;
    const hipError_t rc = runtime().hipMalloc(&p, bytes);
    if (rc == hipErrorOutOfMemory) return nullptr;
    check(rc, "hipMalloc");
    return p;
  }

  void mem_free(void* ptr) noexcept override {
    try {
      runtime().hipFree(ptr);
    } catch (...) {
    }
  }

  // Fine-grained (hipHostMallocCoherent): kernels poll and set these words with
  // system-scope atomics while the host reads and writes them.
  void* host_alloc_mapped(std::size_t bytes, void** device_ptr) override {
    void* p = nullptr;
    HIP_CALL(hipHostMalloc, &p, bytes, kHostMallocPortable | kHostMallocMapped | kHostMallocCoherent);
    std::memset(p, 0, bytes);
    void* d = nullptr;
    try {
      HIP_CALL(hipHostGetDevicePointer, &d, p, 0);
    } catch (...) {
      runtime().hipHostFree(p);
      throw;
    }
    *device_ptr = d;
    return p;
  }

  void host_free_mapped(void* ptr) noexcept override {
    try {
      if (ptr) runtime().hipHostFree(ptr);
    } catch (...) {
    }
  }

  MemoryInfo memory_info() override {
    std::size_t free_b = 0, total_b = 0;
    if (runtime().hipMemGetInfo(&free_b, &total_b) != hipSuccess) return {};
    return {free_b, total_b};
  }

  void memset(void* dst, unsigned char value, std::size_t bytes) override {
    // hipMemset may return before the memory is set; it runs on the null stream: wait
    // for that (a peer told "the flags are zero" must find them zero).
    HIP_CALL(hipMemset, dst, value, bytes);
    HIP_CALL(hipStreamSynchronize, nullptr);
  }

  void memset_async(void* dst, std::uint32_t value, std::size_t element_bytes, std::size_t count,
                    StreamHandle* stream) override {
    const RuntimeApi& api = runtime();
    switch (element_bytes) {
      case 1:
        check(api.hipMemsetD8Async(dst, static_cast<unsigned char>(value), count, hs(stream)), "hipMemsetD8Async");
        return;
      case 2:
        check(api.hipMemsetD16Async(dst, static_cast<unsigned short>(value), count, hs(stream)), "hipMemsetD16Async");
        return;
      case 4:
        check(api.hipMemsetD32Async(dst, static_cast<int>(value), count, hs(stream)), "hipMemsetD32Async");
        return;
    }
    throw Error("memset_async: element size " + std::to_string(element_bytes) + " is not 1, 2 or 4");
  }

  void copy_to_host(void* host, const void* device, std::size_t bytes) override {
    HIP_CALL(hipMemcpyDtoH, host, dptr(device), bytes);
  }

  void copy_from_host(void* device, const void* host, std::size_t bytes) override {
    HIP_CALL(hipMemcpyHtoD, device, dptr(host), bytes);
  }

  void copy_device_async(void* dst, const void* src, std::size_t bytes, StreamHandle* stream) override {
    HIP_CALL(hipMemcpyDtoDAsync, dst, dptr(src), bytes, hs(stream));
  }

  void copy_async(void* dst, const void* src, std::size_t bytes, StreamHandle* stream) override {
    HIP_CALL(hipMemcpyAsync, dst, src, bytes, kMemcpyDefault, hs(stream));
  }

  void copy_peer_async(void* dst, DriverContextHandle* dst_context, const void* src,
                       DriverContextHandle* src_context, std::size_t bytes, StreamHandle* stream) override {
    HIP_CALL(hipMemcpyPeerAsync, dst, device_of(dst_context), src, device_of(src_context), bytes, hs(stream));
  }

  void copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                     std::size_t height, StreamHandle* stream) override {
    HIP_CALL(hipMemcpy2DAsync, dst, dst_pitch, src, src_pitch, width, height, kMemcpyDefault, hs(stream));
  }

  void wait_value_async(const std::uint64_t* word, std::uint64_t value, StreamHandle* stream) override {
    // hipStreamWaitValueGte: 0; every bit of the word compared.
    HIP_CALL(hipStreamWaitValue64, hs(stream), const_cast<std::uint64_t*>(word), value, 0u, ~std::uint64_t{0});
  }

  IpcMemHandle ipc_export(void* base) override {
    static_assert(sizeof(hipIpcMemHandle_t) == sizeof(IpcMemHandle), "IpcMemHandle must hold a hipIpcMemHandle_t");
    hipIpcMemHandle_t h;
    HIP_CALL(hipIpcGetMemHandle, &h, base);
    IpcMemHandle out;
    std::memcpy(out.bytes, &h, sizeof h);
    return out;
  }

  void* ipc_open(const IpcMemHandle& handle) override {
    const RuntimeApi& api = runtime();
    hipIpcMemHandle_t h;
    std::memcpy(&h, handle.bytes, sizeof h);
    const unsigned flags = api.version >= 6 * kVersionMajorScale ? kIpcMemLazyEnablePeerAccessRocm6
                                                                  : kIpcMemLazyEnablePeerAccessRocm5;
    void* p = nullptr;
    check(api.hipIpcOpenMemHandle(&p, h, flags), "hipIpcOpenMemHandle");
    return p;
  }

  void ipc_close(void* ptr) noexcept override {
    try {
      runtime().hipIpcCloseMemHandle(ptr);
    } catch (...) {
    }
  }

  // The runtime sizes the image from its ELF headers (code_object_check.cpp has checked
  // them). A code object for another gfx architecture, or not for AMD at all, fails
  // with one of the four codes below depending on the ROCm version.
  ModuleHandle* module_load(const void* image, const std::string& name) override {
    hipModule_t m = nullptr;
    const hipError_t rc = runtime().hipModuleLoadData(&m, image);
    if (rc == hipErrorNoBinaryForGpu || rc == hipErrorInvalidKernelFile || rc == hipErrorInvalidImage ||
        rc == hipErrorSharedObjectInitFailed) {
      throw IncompatibleCodeError(describe(rc));
    }
    check(rc, "hipModuleLoadData(" + name + ")");
    return reinterpret_cast<ModuleHandle*>(m);
  }

  void module_unload(ModuleHandle* module) noexcept override {
    try {
      runtime().hipModuleUnload(hs(module));
    } catch (...) {
    }
  }

  FunctionHandle* module_function(ModuleHandle* module, const std::string& name) override {
    hipFunction_t f = nullptr;
    const hipError_t rc = runtime().hipModuleGetFunction(&f, hs(module), name.c_str());
    if (rc == hipErrorNotFound) return nullptr;
    check(rc, "hipModuleGetFunction(" + name + ")");
    return reinterpret_cast<FunctionHandle*>(f);
  }

  // HIP has no way to list a module's kernels by name.
  std::vector<std::string> module_function_names(ModuleHandle*) override { return {}; }

  std::optional<ModuleGlobal> module_global(ModuleHandle* module, const std::string& name) override {
    hipDeviceptr_t p = nullptr;
    std::size_t bytes = 0;
    const hipError_t rc = runtime().hipModuleGetGlobal(&p, &bytes, hs(module), name.c_str());
    if (rc == hipErrorNotFound) return std::nullopt;
    check(rc, "hipModuleGetGlobal(" + name + ")");
    return ModuleGlobal{p, bytes};
  }

  // HIP cannot report a function's parameter sizes.
  std::vector<std::size_t> function_param_sizes(FunctionHandle*) override { return {}; }

  // AMD GPUs need no opt-in for dynamic shared memory (LDS): a launch may use whatever
  // the kernel leaves of the workgroup's 64 KiB. ROCm 6's runtime checks the size
  // against that and accepts a hipModuleGetFunction handle here; ROCm 5's returns
  // success without looking.
  void set_max_dynamic_shared_bytes(FunctionHandle* function, std::size_t bytes) override {
    HIP_CALL(hipFuncSetAttribute, reinterpret_cast<const void*>(function), kFuncAttributeMaxDynamicSharedMemorySize,
             static_cast<int>(bytes));
  }

  int resident_blocks_per_sm(FunctionHandle* function, int threads, std::size_t dynamic_shared) override {
    int blocks = 0;
    HIP_CALL(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, hs(function), threads, dynamic_shared);
    return blocks;
  }

  // AMD GPUs have no thread-block clusters.
  int max_active_clusters(FunctionHandle*, int, int, std::size_t) override { return 0; }

  void launch(FunctionHandle* function, Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamHandle* stream,
              void** args, std::string_view kernel_name) override {
    const hipError_t rc = runtime().hipModuleLaunchKernel(hs(function), grid.x, grid.y, grid.z, block.x, block.y,
                                                          block.z, static_cast<unsigned>(shared_bytes), hs(stream),
                                                          args, nullptr);
    if (rc != hipSuccess) check(rc, "launch of kernel '" + std::string(kernel_name) + "'");
  }

  // libiris's own kernels: the code object built for the current device's architecture
  // (tools/amdgpu_kernels builds one per architecture in IRIS_AMDGPU_KERNEL_ARCHS).
  ModuleHandle* runtime_module(const RuntimeKernelImages& images, const std::string& name) override {
    runtime();
    const auto set = amdgpu_images::read(images.amdgpu);
    if (set.empty() && !images.amdgpu.empty()) {
      throw MissingRuntimeKernelsError("libiris's AMD code objects of its own kernels are unreadable (a damaged build)");
    }
    if (set.empty()) {
      throw MissingRuntimeKernelsError(
          "libiris was built without the AMD toolchain (clang-19, lld-19 and rocm-device-libs, or ROCm's clang), so it "
          "has no AMD code objects of its own kernels (runtime/src/kernels/runtime_kernels.cu): rebuild it with them");
    }
    int device = 0;
    HIP_CALL(hipGetDevice, &device);
    const std::string arch = device_arch(device);
    const std::string gfx = arch.substr(0, arch.find(':'));
    std::string built, cmake_list;
    for (const auto& [image_arch, bytes] : set) {
      if (image_arch == gfx) return module_load(bytes.data(), name + " (" + gfx + ")");
      built += (built.empty() ? "" : ", ") + image_arch;
      cmake_list += image_arch + ";";
    }
    throw MissingRuntimeKernelsError("libiris's own kernels were built for " + built + ", not for this GPU's " + gfx +
                                     ": rebuild with -DIRIS_AMDGPU_KERNEL_ARCHS=\"" + cmake_list + gfx + "\"");
  }

  void encode_tensor_map(const TensorMapSpec&, TensorMap*) override {
    runtime();
    throw Error("tensor maps (TMA, cp.async.bulk.tensor) are an NVIDIA feature (sm_90 and later): the hip backend "
                "(AMD GPUs) has none; compile for a target without TMA");
  }

  StreamHandle* stream_create() override {
    hipStream_t s = nullptr;
    HIP_CALL(hipStreamCreateWithFlags, &s, kStreamNonBlocking);
    return reinterpret_cast<StreamHandle*>(s);
  }

  void stream_destroy(StreamHandle* stream) noexcept override {
    try {
      runtime().hipStreamDestroy(hs(stream));
    } catch (...) {
    }
  }

  void stream_synchronize(StreamHandle* stream) override { HIP_CALL(hipStreamSynchronize, hs(stream)); }

  bool stream_query(StreamHandle* stream) override {
    const hipError_t rc = runtime().hipStreamQuery(hs(stream));
    if (rc == hipErrorNotReady) return false;
    check(rc, "hipStreamQuery");
    return true;
  }

  void stream_wait_event(StreamHandle* stream, EventHandle* event) override {
    HIP_CALL(hipStreamWaitEvent, hs(stream), hs(event), 0);
  }

  EventHandle* event_create() override {
    hipEvent_t e = nullptr;
    HIP_CALL(hipEventCreateWithFlags, &e, kEventDefault);
    return reinterpret_cast<EventHandle*>(e);
  }

  void event_destroy(EventHandle* event) noexcept override {
    try {
      runtime().hipEventDestroy(hs(event));
    } catch (...) {
    }
  }

  void event_record(EventHandle* event, StreamHandle* stream) override { HIP_CALL(hipEventRecord, hs(event), hs(stream)); }

  void event_synchronize(EventHandle* event) override { HIP_CALL(hipEventSynchronize, hs(event)); }

  float event_elapsed_ms(EventHandle* begin, EventHandle* end) override {
    float ms = 0;
    HIP_CALL(hipEventElapsedTime, &ms, hs(begin), hs(end));
    return ms;
  }

  void capture_begin(StreamHandle* stream) override {
    HIP_CALL(hipStreamBeginCapture, hs(stream), kStreamCaptureModeThreadLocal);
  }

  GraphHandle* capture_end(StreamHandle* stream) override {
    hipGraph_t g = nullptr;
    HIP_CALL(hipStreamEndCapture, hs(stream), &g);
    return reinterpret_cast<GraphHandle*>(g);
  }

  void capture_abort(StreamHandle* stream) noexcept override {
    try {
      const RuntimeApi& api = runtime();
      hipGraph_t g = nullptr;
      api.hipStreamEndCapture(hs(stream), &g);
      if (g) api.hipGraphDestroy(g);
    } catch (...) {
    }
  }

  GraphExecHandle* graph_instantiate(GraphHandle* graph) override {
    hipGraphExec_t exec = nullptr;
    HIP_CALL(hipGraphInstantiateWithFlags, &exec, hs(graph), 0);
    return reinterpret_cast<GraphExecHandle*>(exec);
  }

  void graph_destroy(GraphHandle* graph) noexcept override {
    try {
      runtime().hipGraphDestroy(hs(graph));
    } catch (...) {
    }
  }

  void graph_launch(GraphExecHandle* exec, StreamHandle* stream) override {
    HIP_CALL(hipGraphLaunch, hs(exec), hs(stream));
  }

  void graph_exec_destroy(GraphExecHandle* exec) noexcept override {
    try {
      runtime().hipGraphExecDestroy(hs(exec));
    } catch (...) {
    }
  }
};

}  // namespace

Backend& hip() {
  static HipBackend hip_backend;
  return hip_backend;
}

}  // namespace iris::backend
