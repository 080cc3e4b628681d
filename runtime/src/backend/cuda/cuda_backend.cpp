// The CUDA driver backend (see backend/backend.hpp) on the dlopen'd driver table of
// cuda_driver.hpp. Handles are the driver's own pointers, cast; nothing is wrapped.
#include <cuda.h>

#include <cstring>
#include <type_traits>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_driver.hpp"

namespace iris::backend {
namespace {

static_assert(sizeof(CUipcMemHandle) == sizeof(IpcMemHandle), "IpcMemHandle must hold a CUipcMemHandle");
static_assert(std::is_trivially_copyable_v<CUipcMemHandle>);

CUstream cu(StreamHandle* s) { return reinterpret_cast<CUstream>(s); }
CUfunction cu(FunctionHandle* f) { return reinterpret_cast<CUfunction>(f); }
CUevent cu(EventHandle* e) { return reinterpret_cast<CUevent>(e); }
CUgraphExec cu(GraphExecHandle* g) { return reinterpret_cast<CUgraphExec>(g); }
CUgraph cu(GraphHandle* g) { return reinterpret_cast<CUgraph>(g); }
CUmodule cu(ModuleHandle* m) { return reinterpret_cast<CUmodule>(m); }
CUcontext cu(DriverContextHandle* c) { return reinterpret_cast<CUcontext>(c); }
CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// Calls a driver entry point; a failure throws iris::Error("<name> failed: ...").
#define CU_CALL(fn, ...) ::iris::cuda::check(::iris::cuda::driver().fn(__VA_ARGS__), #fn)

CUdevice device_handle(int ordinal) {
  CUdevice d = 0;
  CU_CALL(cuDeviceGet, &d, ordinal);
  return d;
}

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }
  void require() override { cuda::driver(); }

  int device_count() override {
    int n = 0;
    cuda::check(cuda::driver().cuDeviceGetCount(&n), "cuDeviceGetCount");
    return n;
  }

  std::string device_name(int device) override {
    const CUdevice d = device_handle(device);
    char name[256] = {0};
    CU_CALL(cuDeviceGetName, name, sizeof name - 1, d);
    return name;
  }

  int device_attribute(int device, DeviceAttribute attribute) override {
    CUdevice_attribute a = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
    switch (attribute) {
      case DeviceAttribute::multiprocessors: a = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT; break;
      case DeviceAttribute::compute_capability_major: a = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR; break;
      case DeviceAttribute::compute_capability_minor: a = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR; break;
    }
    const CUdevice d = device_handle(device);
    int value = 0;
    CU_CALL(cuDeviceGetAttribute, &value, a, d);
    return value;
  }

  std::string device_arch(int device) override {
    return "sm_" + std::to_string(device_attribute(device, DeviceAttribute::compute_capability_major)) +
           std::to_string(device_attribute(device, DeviceAttribute::compute_capability_minor));
  }

  bool can_access_peer(int device, int peer) override {
    const CUdevice a = device_handle(device);
    const CUdevice b = device_handle(peer);
    int can = 0;
    CU_CALL(cuDeviceCanAccessPeer, &can, a, b);
    return can != 0;
  }

  bool peer_native_atomics(int device, int peer) override {
    const CUdevice a = device_handle(device);
    const CUdevice b = device_handle(peer);
    int atomics = 0;
    cuda::driver().cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, a, b);
    return atomics != 0;
  }

  DriverContextHandle* retain_primary_context(int device) override {
    const CUdevice d = device_handle(device);
    CUcontext c = nullptr;
    CU_CALL(cuDevicePrimaryCtxRetain, &c, d);
    return reinterpret_cast<DriverContextHandle*>(c);
  }

  void release_primary_context(int device) noexcept override {
    try {
      const auto& api = cuda::driver();
      CUdevice d = 0;
      if (api.cuDeviceGet(&d, device) == CUDA_SUCCESS) api.cuDevicePrimaryCtxRelease(d);
    } catch (...) {
    }
  }

  void set_current_context(DriverContextHandle* context) override { CU_CALL(cuCtxSetCurrent, cu(context)); }

  void enable_peer_access(DriverContextHandle* peer) override {
    const CUresult e = cuda::driver().cuCtxEnablePeerAccess(cu(peer), 0);
    if (e != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) cuda::check(e, "cuCtxEnablePeerAccess");
  }

  void synchronize() override { CU_CALL(cuCtxSynchronize); }

  void* mem_alloc(std::size_t bytes) override {
    CUdeviceptr p = 0;
    const CUresult rc = cuda::driver().cuMemAlloc(&p, bytes);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
    cuda::check(rc, "cuMemAlloc");
    return reinterpret_cast<void*>(p);
  }

  void mem_free(void* ptr) noexcept override {
    try {
      cuda::driver().cuMemFree(dptr(ptr));
    } catch (...) {
    }
  }

  void* host_alloc_mapped(std::size_t bytes, void** device_ptr) override {
    void* p = nullptr;
    CU_CALL(cuMemHostAlloc, &p, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    std::memset(p, 0, bytes);
    CUdeviceptr d = 0;
    try {
      CU_CALL(cuMemHostGetDevicePointer, &d, p, 0);
    } catch (...) {
      cuda::driver().cuMemFreeHost(p);
      throw;
    }
    *device_ptr = reinterpret_cast<void*>(d);
    return p;
  }

  void host_free_mapped(void* ptr) noexcept override {
    try {
      if (ptr) cuda::driver().cuMemFreeHost(ptr);
    } catch (...) {
    }
  }

  MemoryInfo memory_info() override {
    size_t free_b = 0, total_b = 0;
    cuda::driver().cuMemGetInfo(&free_b, &total_b);
    return {free_b, total_b};
  }

  void memset(void* dst, unsigned char value, std::size_t bytes) override {
    // cuMemsetD8 may return before the memory is set (CUDA's memset synchronization
    // rules): a peer process told "the flags are zero" could otherwise signal before
    // they are, and lose its signal. It runs on the legacy stream: wait for that.
    CU_CALL(cuMemsetD8, dptr(dst), value, bytes);
    CU_CALL(cuStreamSynchronize, nullptr);
  }

  void memset_async(void* dst, std::uint32_t value, std::size_t element_bytes, std::size_t count,
                    StreamHandle* stream) override {
    const auto& api = cuda::driver();
    switch (element_bytes) {
      case 1:
        cuda::check(api.cuMemsetD8Async(dptr(dst), static_cast<unsigned char>(value), count, cu(stream)),
                    "cuMemsetD8Async");
        return;
      case 2:
        cuda::check(api.cuMemsetD16Async(dptr(dst), static_cast<unsigned short>(value), count, cu(stream)),
                    "cuMemsetD16Async");
        return;
      case 4:
        cuda::check(api.cuMemsetD32Async(dptr(dst), static_cast<unsigned>(value), count, cu(stream)),
                    "cuMemsetD32Async");
        return;
    }
    throw Error("memset_async: element size " + std::to_string(element_bytes) + " is not 1, 2 or 4");
  }

  void copy_to_host(void* host, const void* device, std::size_t bytes) override {
    CU_CALL(cuMemcpyDtoH, host, dptr(device), bytes);
  }

  void copy_from_host(void* device, const void* host, std::size_t bytes) override {
    CU_CALL(cuMemcpyHtoD, dptr(device), host, bytes);
  }

  void copy_device_async(void* dst, const void* src, std::size_t bytes, StreamHandle* stream) override {
    CU_CALL(cuMemcpyDtoDAsync, dptr(dst), dptr(src), bytes, cu(stream));
  }

  void copy_async(void* dst, const void* src, std::size_t bytes, StreamHandle* stream) override {
    CU_CALL(cuMemcpyAsync, dptr(dst), dptr(src), bytes, cu(stream));
  }

  void copy_peer_async(void* dst, DriverContextHandle* dst_context, const void* src,
                       DriverContextHandle* src_context, std::size_t bytes, StreamHandle* stream) override {
    CU_CALL(cuMemcpyPeerAsync, dptr(dst), cu(dst_context), dptr(src), cu(src_context), bytes, cu(stream));
  }

  void copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                     std::size_t height, StreamHandle* stream) override {
    CUDA_MEMCPY2D c{};
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = dptr(src);
    c.srcPitch = src_pitch;
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = dptr(dst);
    c.dstPitch = dst_pitch;
    c.WidthInBytes = width;
    c.Height = height;
    CU_CALL(cuMemcpy2DAsync, &c, cu(stream));
  }

  void wait_value_async(const std::uint64_t* word, std::uint64_t value, StreamHandle* stream) override {
    CU_CALL(cuStreamWaitValue64, cu(stream), dptr(word), value, CU_STREAM_WAIT_VALUE_GEQ);
  }

  IpcMemHandle ipc_export(void* base) override {
    CUipcMemHandle h;
    CU_CALL(cuIpcGetMemHandle, &h, dptr(base));
    IpcMemHandle out;
    std::memcpy(out.bytes, &h, sizeof h);
    return out;
  }

  void* ipc_open(const IpcMemHandle& handle) override {
    CUipcMemHandle h;
    std::memcpy(&h, handle.bytes, sizeof h);
    CUdeviceptr p = 0;
    CU_CALL(cuIpcOpenMemHandle, &p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    return reinterpret_cast<void*>(p);
  }

  void ipc_close(void* ptr) noexcept override {
    try {
      cuda::driver().cuIpcCloseMemHandle(dptr(ptr));
    } catch (...) {
    }
  }

  ModuleHandle* module_load(const void* image, const std::string& name) override {
    CUmodule m = nullptr;
    const CUresult rc = cuda::driver().cuModuleLoadData(&m, image);
    if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU || rc == CUDA_ERROR_INVALID_PTX || rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
      throw IncompatibleCodeError(cuda::describe(rc));
    }
    cuda::check(rc, "cuModuleLoadData(" + name + ")");
    return reinterpret_cast<ModuleHandle*>(m);
  }

  void module_unload(ModuleHandle* module) noexcept override {
    try {
      cuda::driver().cuModuleUnload(cu(module));
    } catch (...) {
    }
  }

  FunctionHandle* module_function(ModuleHandle* module, const std::string& name) override {
    CUfunction f = nullptr;
    const CUresult rc = cuda::driver().cuModuleGetFunction(&f, cu(module), name.c_str());
    if (rc == CUDA_ERROR_NOT_FOUND) return nullptr;
    cuda::check(rc, "cuModuleGetFunction(" + name + ")");
    return reinterpret_cast<FunctionHandle*>(f);
  }

  std::vector<std::string> module_function_names(ModuleHandle* module) override {
    std::vector<std::string> names;
    const auto& api = cuda::driver();
    if (!api.cuModuleGetFunctionCount || !api.cuModuleEnumerateFunctions || !api.cuFuncGetName) return names;
    unsigned count = 0;
    if (api.cuModuleGetFunctionCount(&count, cu(module)) != CUDA_SUCCESS) return names;
    std::vector<CUfunction> fns(count);
    if (count && api.cuModuleEnumerateFunctions(fns.data(), count, cu(module)) != CUDA_SUCCESS) return names;
    for (CUfunction f : fns) {
      const char* n = nullptr;
      if (api.cuFuncGetName(&n, f) == CUDA_SUCCESS && n) names.emplace_back(n);
    }
    return names;
  }

  std::optional<ModuleGlobal> module_global(ModuleHandle* module, const std::string& name) override {
    CUdeviceptr p = 0;
    size_t bytes = 0;
    const CUresult rc = cuda::driver().cuModuleGetGlobal(&p, &bytes, cu(module), name.c_str());
    if (rc == CUDA_ERROR_NOT_FOUND) return std::nullopt;
    cuda::check(rc, "cuModuleGetGlobal(" + name + ")");
    return ModuleGlobal{reinterpret_cast<void*>(p), bytes};
  }

  std::vector<std::size_t> function_param_sizes(FunctionHandle* function) override {
    std::vector<std::size_t> sizes;
    const auto& api = cuda::driver();
    if (!api.cuFuncGetParamInfo) return sizes;
    for (size_t i = 0;; ++i) {
      size_t offset = 0, size = 0;
      if (api.cuFuncGetParamInfo(cu(function), i, &offset, &size) != CUDA_SUCCESS) break;
      sizes.push_back(size);
    }
    return sizes;
  }

  void set_max_dynamic_shared_bytes(FunctionHandle* function, std::size_t bytes) override {
    CU_CALL(cuFuncSetAttribute, cu(function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
  }

  int resident_blocks_per_sm(FunctionHandle* function, int threads, std::size_t dynamic_shared) override {
    int blocks = 0;
    CU_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, cu(function), threads, dynamic_shared);
    return blocks;
  }

  int max_active_clusters(FunctionHandle* function, int cluster, int threads, std::size_t dynamic_shared) override {
    const auto& api = cuda::driver();
    if (!api.cuOccupancyMaxActiveClusters) return 0;
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = static_cast<unsigned>(cluster);
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>(cluster);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = static_cast<unsigned>(threads);
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = static_cast<unsigned>(dynamic_shared);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = 0;
    if (api.cuOccupancyMaxActiveClusters(&n, cu(function), &cfg) != CUDA_SUCCESS) return 0;
    return n;
  }

  void launch(FunctionHandle* function, Dim3 grid, Dim3 block, std::size_t shared_bytes, StreamHandle* stream,
              void** args, std::string_view kernel_name) override {
    const CUresult rc = cuda::driver().cuLaunchKernel(cu(function), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                                      static_cast<unsigned>(shared_bytes), cu(stream), args, nullptr);
    if (rc != CUDA_SUCCESS) cuda::check(rc, "launch of kernel '" + std::string(kernel_name) + "'");
  }

  ModuleHandle* runtime_module(const RuntimeKernelImages& images, const std::string& name) override {
    return module_load(images.cuda_fatbin.data(), name);
  }

  void encode_tensor_map(const TensorMapSpec& spec, TensorMap* out) override {
    static_assert(sizeof(CUtensorMap) == sizeof(TensorMap::opaque));
    const auto& api = cuda::driver();
    if (!api.cuTensorMapEncodeTiled) throw Error("tensor maps need a CUDA 12 driver (cuTensorMapEncodeTiled is missing)");
    CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    switch (spec.dtype) {
      case DType::f32: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
      case DType::f16: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
      case DType::bf16: type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
      case DType::i32: type = CU_TENSOR_MAP_DATA_TYPE_INT32; break;
      case DType::i64: type = CU_TENSOR_MAP_DATA_TYPE_INT64; break;
      case DType::u32: type = CU_TENSOR_MAP_DATA_TYPE_UINT32; break;
      case DType::u64: type = CU_TENSOR_MAP_DATA_TYPE_UINT64; break;
    }
    CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    switch (spec.swizzle) {
      case TensorMapSwizzle::none: swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; break;
      case TensorMapSwizzle::b32: swizzle = CU_TENSOR_MAP_SWIZZLE_32B; break;
      case TensorMapSwizzle::b64: swizzle = CU_TENSOR_MAP_SWIZZLE_64B; break;
      case TensorMapSwizzle::b128: swizzle = CU_TENSOR_MAP_SWIZZLE_128B; break;
    }
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], elem_strides[5];
    for (int i = 0; i < spec.rank; ++i) {
      const auto u = static_cast<std::size_t>(i);
      dims[i] = spec.dims[u];
      box[i] = spec.box[u];
      elem_strides[i] = 1;
      if (i > 0) strides[i - 1] = spec.strides[u];
    }
    CUtensorMap map;
    CU_CALL(cuTensorMapEncodeTiled, &map, type, static_cast<cuuint32_t>(spec.rank), const_cast<void*>(spec.base), dims,
            strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    std::memcpy(out->opaque, &map, sizeof map);
  }

  StreamHandle* stream_create() override {
    CUstream s = nullptr;
    CU_CALL(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
    return reinterpret_cast<StreamHandle*>(s);
  }

  void stream_destroy(StreamHandle* stream) noexcept override {
    try {
      cuda::driver().cuStreamDestroy(cu(stream));
    } catch (...) {
    }
  }

  void stream_synchronize(StreamHandle* stream) override { CU_CALL(cuStreamSynchronize, cu(stream)); }

  bool stream_query(StreamHandle* stream) override {
    const CUresult rc = cuda::driver().cuStreamQuery(cu(stream));
    if (rc == CUDA_ERROR_NOT_READY) return false;
    cuda::check(rc, "cuStreamQuery");
    return true;
  }

  void stream_wait_event(StreamHandle* stream, EventHandle* event) override {
    CU_CALL(cuStreamWaitEvent, cu(stream), cu(event), 0);
  }

  EventHandle* event_create() override {
    CUevent e = nullptr;
    CU_CALL(cuEventCreate, &e, CU_EVENT_DEFAULT);
    return reinterpret_cast<EventHandle*>(e);
  }

  void event_destroy(EventHandle* event) noexcept override {
    try {
      cuda::driver().cuEventDestroy(cu(event));
    } catch (...) {
    }
  }

  void event_record(EventHandle* event, StreamHandle* stream) override { CU_CALL(cuEventRecord, cu(event), cu(stream)); }

  void event_synchronize(EventHandle* event) override { CU_CALL(cuEventSynchronize, cu(event)); }

  float event_elapsed_ms(EventHandle* begin, EventHandle* end) override {
    float ms = 0;
    CU_CALL(cuEventElapsedTime, &ms, cu(begin), cu(end));
    return ms;
  }

  void capture_begin(StreamHandle* stream) override {
    CU_CALL(cuStreamBeginCapture, cu(stream), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  }

  bool stream_capturing(StreamHandle* stream) override {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CU_CALL(cuStreamIsCapturing, cu(stream), &status);
    return status != CU_STREAM_CAPTURE_STATUS_NONE;
  }

  GraphHandle* capture_end(StreamHandle* stream) override {
    CUgraph g = nullptr;
    CU_CALL(cuStreamEndCapture, cu(stream), &g);
    return reinterpret_cast<GraphHandle*>(g);
  }

  void capture_abort(StreamHandle* stream) noexcept override {
    try {
      const auto& api = cuda::driver();
      CUgraph g = nullptr;
      api.cuStreamEndCapture(cu(stream), &g);
      if (g) api.cuGraphDestroy(g);
    } catch (...) {
    }
  }

  GraphExecHandle* graph_instantiate(GraphHandle* graph) override {
    CUgraphExec exec = nullptr;
    cuda::check(cuda::driver().cuGraphInstantiate(&exec, cu(graph), 0), "cuGraphInstantiate");
    return reinterpret_cast<GraphExecHandle*>(exec);
  }

  void graph_destroy(GraphHandle* graph) noexcept override {
    try {
      cuda::driver().cuGraphDestroy(cu(graph));
    } catch (...) {
    }
  }

  void graph_launch(GraphExecHandle* exec, StreamHandle* stream) override { CU_CALL(cuGraphLaunch, cu(exec), cu(stream)); }

  void graph_exec_destroy(GraphExecHandle* exec) noexcept override {
    try {
      cuda::driver().cuGraphExecDestroy(cu(exec));
    } catch (...) {
    }
  }
};

}  // namespace

Backend& cuda() {
  static CudaBackend cuda_backend;
  return cuda_backend;
}

}  // namespace iris::backend
