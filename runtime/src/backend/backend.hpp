// The device backend: everything libiris asks of a GPU driver (devices, contexts,
// memory, IPC, modules, launches, streams, events, graphs) behind one interface, in the
// spirit of Halide's halide_device_interface_t. The runtime (context, module, symmetric
// heap, timing, JIT) calls only this; the CUDA driver implementation lives in
// backend/cuda/ and is the only code that includes <cuda.h>. The HIP backend
// (backend/hip/, AMD GPUs, the HIP runtime dlopen'd without its headers) and the host
// backend (backend/host/, CPU threads) implement the same class.
//
// Handles are opaque pointers to structs no one defines: each is the backend's own
// handle (on CUDA, StreamHandle* is a CUstream, FunctionHandle* a CUfunction, ...), so
// code that talks to the driver directly may reinterpret_cast between the two. One
// exception: on HIP a DriverContextHandle* holds a device ordinal, not a hipCtx_t.
//
// Errors: a failing call throws iris::Error("<call> failed: <driver's description>");
// iris::NoDeviceError when the backend cannot be used at all (no driver library, a
// driver too old, no device). Calls that release something (unload, free, destroy,
// close, release) never throw and ignore failures, as teardown must. Where the runtime
// turns a particular outcome into its own message, the call reports it in its result
// (documented per call) instead of throwing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iris/device/context.hpp"
#include "iris/error.hpp"
#include "iris/module.hpp"
#include "iris/tensor_map.hpp"

namespace iris {

// Public handles (declared in iris/module.hpp and iris/timing.hpp too).
struct StreamHandle;
struct FunctionHandle;
struct EventHandle;
struct GraphExecHandle;
// Handles only the runtime sees.
struct ModuleHandle;         // a loaded code object (CUmodule)
struct DriverContextHandle;  // a device's (primary) context (CUcontext)
struct GraphHandle;          // a captured, not yet instantiated graph (CUgraph)

namespace backend {

enum class DeviceAttribute { multiprocessors, compute_capability_major, compute_capability_minor };

// An exported device allocation another process can open (CUipcMemHandle on CUDA).
// Plain bytes, so bootstraps exchange it as they are.
struct IpcMemHandle {
  std::byte bytes[64];
};

// A __device__ variable of a module: its address and size.
struct ModuleGlobal {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

struct MemoryInfo {
  std::size_t free = 0;
  std::size_t total = 0;
};

// Thrown by module_load for a well-formed code object the device cannot run (no code
// for its architecture, PTX the driver cannot compile). what() is the driver's
// description; the runtime wraps it in a message that names the module.
class IncompatibleCodeError : public Error {
 public:
  using Error::Error;
};

// libiris's own kernels as built for GPUs (runtime/src/kernels/runtime_kernels.cu): the
// CUDA fatbin, and the AMD code objects as an image set (kernels/amdgpu_images.hpp;
// empty when libiris was built without the AMD toolchain).
struct RuntimeKernelImages {
  std::span<const std::byte> cuda_fatbin;
  std::span<const std::byte> amdgpu;
};

// Thrown by runtime_module when the backend has no code object of libiris's own kernels
// (hip, built without the AMD toolchain or for other architectures). The runtime then
// starts anyway and refuses, naming this, each feature that needs one of them (fill of
// 8-byte types, fill_arange, fill_random, device_barrier and so the collectives,
// tracing).
class MissingRuntimeKernelsError : public Error {
 public:
  using Error::Error;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "cuda", "hip", "host".
  virtual const char* name() const = 0;
  // Loads and initializes the driver on first use; throws NoDeviceError (saying why)
  // when the backend cannot be used. Every other call does the same implicitly.
  virtual void require() = 0;

  // --- devices (by ordinal, 0 .. device_count() - 1) -----------------------------------
  virtual int device_count() = 0;
  virtual std::string device_name(int device) = 0;
  // compute_capability_major/minor are 0 on GPUs that have none (AMD) and on the host.
  virtual int device_attribute(int device, DeviceAttribute attribute) = 0;
  // The device's architecture as its code objects name it: "sm_90" (CUDA),
  // "gfx942:sramecc+:xnack-" (HIP: the gfx name, then its target features), "host".
  virtual std::string device_arch(int device) = 0;
  virtual bool can_access_peer(int device, int peer) = 0;
  // Whether atomics from `device` on `peer`'s memory are native; false when unknown.
  virtual bool peer_native_atomics(int device, int peer) = 0;

  // --- contexts ---------------------------------------------------------------------------
  // The device's primary context, retained (one release_primary_context per retain).
  virtual DriverContextHandle* retain_primary_context(int device) = 0;
  virtual void release_primary_context(int device) noexcept = 0;
  // Makes `context` current on the calling thread: later calls act on its device.
  virtual void set_current_context(DriverContextHandle* context) = 0;
  // Lets the current context access `peer`'s memory; already enabled is not an error.
  virtual void enable_peer_access(DriverContextHandle* peer) = 0;
  // Waits for all work of the current context.
  virtual void synchronize() = 0;

  // --- device memory (current context; addresses are unified: host and device
  // pointers may be passed where copies accept either) -----------------------------------
  // nullptr when the device is out of memory (ask memory_info() why); throws otherwise.
  virtual void* mem_alloc(std::size_t bytes) = 0;
  virtual void mem_free(void* ptr) noexcept = 0;
  // Page-locked host memory every device maps (zero-filled): the host reads and writes
  // it with plain loads and stores while kernels run, and kernels reach it at
  // *device_ptr (system-scope accesses). Free with host_free_mapped.
  virtual void* host_alloc_mapped(std::size_t bytes, void** device_ptr) = 0;
  virtual void host_free_mapped(void* ptr) noexcept = 0;
  // Free and total bytes of the current device; zeros when the driver cannot tell.
  virtual MemoryInfo memory_info() = 0;
  // Sets `bytes` bytes to `value`, synchronously.
  virtual void memset(void* dst, unsigned char value, std::size_t bytes) = 0;
  // Sets `count` elements of `element_bytes` (1, 2 or 4) to the low bits of `value`.
  virtual void memset_async(void* dst, std::uint32_t value, std::size_t element_bytes, std::size_t count,
                            StreamHandle* stream) = 0;
  virtual void copy_to_host(void* host, const void* device, std::size_t bytes) = 0;    // synchronous
  virtual void copy_from_host(void* device, const void* host, std::size_t bytes) = 0;  // synchronous
  virtual void copy_device_async(void* dst, const void* src, std::size_t bytes, StreamHandle* stream) = 0;
  // Any direction (host or device on either side), ordered on `stream`.
  virtual void copy_async(void* dst, const void* src, std::size_t bytes, StreamHandle* stream) = 0;
  virtual void copy_peer_async(void* dst, DriverContextHandle* dst_context, const void* src,
                               DriverContextHandle* src_context, std::size_t bytes, StreamHandle* stream) = 0;
  // `height` rows of `width` bytes, rows `dst_pitch` and `src_pitch` bytes apart (device
  // memory by unified address, a peer's included), ordered on `stream`.
  virtual void copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                             std::size_t height, StreamHandle* stream) = 0;
  // Holds what is enqueued on `stream` after it until the 64-bit word at `word` (device
  // memory) is at least `value`.
  virtual void wait_value_async(const std::uint64_t* word, std::uint64_t value, StreamHandle* stream) = 0;

  // --- IPC: sharing a mem_alloc'd block with other processes -----------------------------
  virtual IpcMemHandle ipc_export(void* base) = 0;
  // Maps a peer's exported block (peer access enabled lazily); close with ipc_close.
  virtual void* ipc_open(const IpcMemHandle& handle) = 0;
  virtual void ipc_close(void* ptr) noexcept = 0;

  // --- modules and functions --------------------------------------------------------------
  // Loads a code object from memory into the current context (PTX NUL-terminated).
  // Throws IncompatibleCodeError when it is not for this device; `name` labels errors.
  virtual ModuleHandle* module_load(const void* image, const std::string& name) = 0;
  virtual void module_unload(ModuleHandle* module) noexcept = 0;
  // nullptr when the module has no function of that name.
  virtual FunctionHandle* module_function(ModuleHandle* module, const std::string& name) = 0;
  // Names of the module's functions; empty when the driver cannot enumerate them.
  virtual std::vector<std::string> module_function_names(ModuleHandle* module) = 0;
  // A __device__ variable's address and size; std::nullopt when there is none so named.
  virtual std::optional<ModuleGlobal> module_global(ModuleHandle* module, const std::string& name) = 0;
  // Byte size of each parameter; empty when the driver cannot tell.
  virtual std::vector<std::size_t> function_param_sizes(FunctionHandle* function) = 0;
  // Allows launches with up to `bytes` of dynamic shared memory (beyond the default).
  virtual void set_max_dynamic_shared_bytes(FunctionHandle* function, std::size_t bytes) = 0;
  // Programs of `threads` threads and `dynamic_shared` bytes that one multiprocessor
  // holds at once (0: none fits).
  virtual int resident_blocks_per_sm(FunctionHandle* function, int threads, std::size_t dynamic_shared) = 0;
  // Clusters of `cluster` programs (along x) that the device holds at once, with
  // `threads` threads and `dynamic_shared` bytes each; 0 when none fits or the driver
  // cannot tell (no cluster support).
  virtual int max_active_clusters(FunctionHandle* function, int cluster, int threads, std::size_t dynamic_shared) = 0;
  // Enqueues `function` with `args` (one pointer per parameter). A failure throws
  // iris::Error("launch of kernel '<kernel_name>' failed: ...").
  virtual void launch(FunctionHandle* function, Dim3 grid, Dim3 block, std::size_t shared_bytes,
                      StreamHandle* stream, void** args, std::string_view kernel_name) = 0;

  // The module of libiris's own kernels (fill, arange, random, the device barrier, the
  // trace clock), given the images built for GPUs: cuda loads the fatbin, hip the AMD
  // code object for the current device's architecture, host supplies its own kernels of
  // the same names and parameters. A backend without an image for its GPU throws
  // MissingRuntimeKernelsError.
  virtual ModuleHandle* runtime_module(const RuntimeKernelImages& images, const std::string& name) = 0;

  // --- checks (the host backend's; others have none) ------------------------------------
  // Called as each job starts (iris::run, before any rank): turns the race check on or
  // off for it (Options::check_races); a backend without one throws for `true`.
  virtual void set_race_check(bool on) {
    if (on) throw Error(std::string("the race check (Options::check_races, IRIS_CHECK_RACES) needs the host backend, not ") + name());
  }
  // Whether host_collective() wants to hear of every host collective.
  virtual bool watches_collectives() const { return false; }
  // Around each host collective of a rank whose device context is `ctx` (entering, then
  // leaving): the deadlock check's blocked ranks, the race check's barrier edges.
  virtual void host_collective(const device::Context& ctx, bool entering) {
    (void)ctx;
    (void)entering;
  }

  // Encodes a tiled tensor map (a validated spec; see iris/tensor_map.hpp) into `out`.
  virtual void encode_tensor_map(const TensorMapSpec& spec, TensorMap* out) = 0;

  // --- streams and events -------------------------------------------------------------------
  virtual StreamHandle* stream_create() = 0;  // non-blocking with respect to the default stream
  virtual void stream_destroy(StreamHandle* stream) noexcept = 0;
  virtual void stream_synchronize(StreamHandle* stream) = 0;
  // Whether everything enqueued on `stream` has finished (an error of that work throws).
  virtual bool stream_query(StreamHandle* stream) = 0;
  virtual void stream_wait_event(StreamHandle* stream, EventHandle* event) = 0;
  virtual EventHandle* event_create() = 0;  // with timing
  virtual void event_destroy(EventHandle* event) noexcept = 0;
  virtual void event_record(EventHandle* event, StreamHandle* stream) = 0;
  virtual void event_synchronize(EventHandle* event) = 0;
  virtual float event_elapsed_ms(EventHandle* begin, EventHandle* end) = 0;

  // --- graphs: capture what is enqueued on a stream, replay it --------------------------------
  // Capture is thread-local: other threads' work is not captured and does not break it.
  virtual void capture_begin(StreamHandle* stream) = 0;
  // Whether work enqueued on `stream` is being captured into a graph now (by libiris or
  // by anyone else, such as torch.cuda.graph).
  virtual bool stream_capturing(StreamHandle*) { return false; }
  virtual GraphHandle* capture_end(StreamHandle* stream) = 0;
  // Ends a capture after a failure, dropping what was captured.
  virtual void capture_abort(StreamHandle* stream) noexcept = 0;
  virtual GraphExecHandle* graph_instantiate(GraphHandle* graph) = 0;
  virtual void graph_destroy(GraphHandle* graph) noexcept = 0;
  virtual void graph_launch(GraphExecHandle* exec, StreamHandle* stream) = 0;
  virtual void graph_exec_destroy(GraphExecHandle* exec) noexcept = 0;
};

// The backend libiris runs on: the one select() chose, else IRIS_BACKEND (cuda, the
// default, hip or host). Never throws: a missing driver shows up at the first call on it.
Backend& active();
// Chooses the backend by name ("cuda", "hip" or "host"; "": IRIS_BACKEND, else cuda), so
// that each job runs on the backend its Options name, whatever an earlier job used.
// Throws iris::Error for another name. Call it before a job starts (iris::run does).
// cuda stays the default even where only ROCm is installed: AMD users set
// IRIS_BACKEND=hip (docs/runtime.md says why there is no automatic choice).
void select(std::string_view name);
// The implementations.
Backend& cuda();
Backend& hip();
Backend& host();

}  // namespace backend
}  // namespace iris
