// One rank's view of a job: its GPU, its stream, the symmetric heap shared with every
// other rank, and host-side collectives. Create contexts through iris::run().
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "iris/device/context.hpp"
#include "iris/dtype.hpp"
#include "iris/module.hpp"
#include "iris/options.hpp"

namespace iris {

template <class T> class Tensor;
using Shape = std::vector<std::int64_t>;

struct HeapInfo {
  std::uintptr_t base = 0;  // this rank's heap base address
  std::size_t capacity = 0;  // bytes the allocator manages
  std::size_t used = 0;
  std::size_t free = 0;
  std::size_t largest_free_block = 0;
  std::size_t live_allocations = 0;
};

class Context {
 public:
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  int rank() const;
  int world() const;
  int device() const;               // the backend's ordinal of this rank's GPU
  // The backend this job runs on: "cuda", "hip", or "host" (CPU threads; Options::backend).
  const char* backend() const;
  bool on_host() const;             // backend() is "host"
  const std::string& device_name() const;
  int multiprocessors() const;
  const char* bootstrap_name() const;  // "threads" or "mpi"
  Stream stream() const;            // the rank's own (non-blocking) stream

  // By-value kernel argument: rank, world and every rank's heap base.
  const device::Context& device_context() const;

  // --- symmetric heap ---------------------------------------------------------------
  // Collective: every rank must call it with the same arguments, in the same order;
  // all get the same offset. A mismatch throws on every rank (nothing is corrupted).
  void* heap_alloc(std::size_t bytes, std::size_t alignment = 256);
  // Frees a heap_alloc'd block (local; keep the same order on every rank). Throws on
  // a double free or a pointer heap_alloc did not return.
  void heap_free(void* ptr);
  HeapInfo heap_info() const;
  bool in_heap(const void* ptr) const;
  // True when all of [ptr, ptr + bytes) lies in this rank's symmetric heap.
  bool in_heap(const void* ptr, std::size_t bytes) const;
  // The address of `ptr`'s twin on rank `to`, usable from this process (host copies).
  void* translate(const void* ptr, int to) const;
  template <class T> T* translate(T* ptr, int to) const { return static_cast<T*>(translate(static_cast<const void*>(ptr), to)); }

  // --- tensors on the heap (collective, like heap_alloc) ------------------------------
  template <class T> Tensor<T> empty(std::size_t n) { return empty<T>(Shape{static_cast<std::int64_t>(n)}); }
  template <class T> Tensor<T> empty(const Shape& shape);
  template <class T> Tensor<T> zeros(const Shape& shape) { return full<T>(shape, 0.0); }
  template <class T> Tensor<T> zeros(std::size_t n) { return full<T>(n, 0.0); }
  template <class T> Tensor<T> ones(const Shape& shape) { return full<T>(shape, 1.0); }
  template <class T> Tensor<T> ones(std::size_t n) { return full<T>(n, 1.0); }
  template <class T> Tensor<T> full(const Shape& shape, double value);
  template <class T> Tensor<T> full(std::size_t n, double value) { return full<T>(Shape{static_cast<std::int64_t>(n)}, value); }
  // 0, 1, 2, ... (converted to T)
  template <class T> Tensor<T> arange(std::size_t n);
  // Uniform in [0, 1) (floating T) and standard normal; the stream of numbers depends
  // on (seed, rank, index) only, so results are reproducible.
  template <class T> Tensor<T> rand(const Shape& shape, std::uint64_t seed = 0);
  template <class T> Tensor<T> rand(std::size_t n, std::uint64_t seed = 0) { return rand<T>(Shape{static_cast<std::int64_t>(n)}, seed); }
  template <class T> Tensor<T> randn(const Shape& shape, std::uint64_t seed = 0);
  template <class T> Tensor<T> randn(std::size_t n, std::uint64_t seed = 0) { return randn<T>(Shape{static_cast<std::int64_t>(n)}, seed); }
  // Uniform integers in [low, high).
  template <class T> Tensor<T> randint(const Shape& shape, std::int64_t low, std::int64_t high, std::uint64_t seed = 0);
  template <class T> Tensor<T> randint(std::size_t n, std::int64_t low, std::int64_t high, std::uint64_t seed = 0) {
    return randint<T>(Shape{static_cast<std::int64_t>(n)}, low, high, seed);
  }

  // --- copies (synchronous with respect to the rank's stream) ------------------------
  // Where `device` is in the symmetric heap, the range must end inside it (an Error
  // otherwise); other device memory is the caller's to size.
  void copy_to_host(void* host, const void* device, std::size_t bytes);
  void copy_from_host(void* device, const void* host, std::size_t bytes);

  // --- asynchronous device work on a stream (default: the rank's) --------------------
  // Device memory to device memory (this rank's GPU, or a peer's heap by address).
  void copy_async(void* dst, const void* src, std::size_t bytes, Stream stream = nullptr);
  // `bytes` zero bytes at `ptr`.
  void zero_async(void* ptr, std::size_t bytes, Stream stream = nullptr);
  // `bytes` bytes of `value` at `ptr` (0xff: every slot of a .iris kernel's `send` and
  // `receive` empty).
  void set_async(void* ptr, unsigned char value, std::size_t bytes, Stream stream = nullptr);
  // `height` rows of `width` bytes from `src` (rows `src_pitch` bytes apart) to `dst`
  // (rows `dst_pitch` apart): device memory, this GPU's or a peer's heap by address.
  void copy_2d_async(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                     std::size_t height, Stream stream = nullptr);
  // What is enqueued on `stream` from now on waits until the u64 at `word` (this GPU's
  // memory) is at least `value`. On CUDA the GPU's front end waits, no SM does (the
  // comparison is CUDA's, signed on the difference: values less than 2^63 apart); on HIP
  // a small kernel spins on an SM; on the host backend, which runs work as it is
  // enqueued, the word must be there already.
  void wait_value(const std::uint64_t* word, std::uint64_t value, Stream stream = nullptr);

  // --- streams -----------------------------------------------------------------------
  // Streams of this rank for work that runs beside the rank's own (i = 0 .. 7; 0 is the
  // one side stream most work needs): each made on first use, destroyed with the context.
  static constexpr int kSideStreams = 8;
  Stream side_stream(int i = 0);
  // What is enqueued on `before` so far happens before what is enqueued on `after` from
  // now on (an event recorded on one and waited for on the other; the host does not
  // wait). order(a, b) forks b from a; order(b, a) joins b back into a.
  void order(Stream before, Stream after);
  // Whether `stream` (default: the rank's) is being captured into a CUDA graph now (by
  // iris::Graph or anyone else); false on backends without graphs.
  bool capturing(Stream stream = nullptr) const;

  // A library's words for a device wait that gave up, or that a peer's failure ended, on
  // a flag of its own: called on this rank with the flag's address here, the value
  // waited for, and `read`, which copies bytes of this rank's heap to the host (the
  // rank's GPU work has stopped by then; false where it cannot). A non-empty answer goes
  // into the error ("in iris::ccl::all_reduce of 4096 bf16 elements ..., waiting for
  // rank 1"). The collectives register one.
  using WaitRead = std::function<bool(const void* device, void* host, std::size_t bytes)>;
  void explain_waits(std::function<std::string(const void* flag, std::uint64_t expected, const WaitRead& read)> explain);

  // Per-context state of a library built on libiris (the collectives keep their programs
  // and buffers here): made by `make` on the first call with `key`, then returned again;
  // destroyed with the context, before its heap.
  std::shared_ptr<void> attachment(const std::string& key, const std::function<std::shared_ptr<void>()>& make);

  // --- synchronization and collectives -----------------------------------------------
  void synchronize();                 // waits for this rank's stream
  // Waits for this rank's stream, then for every rank to get here (host barrier).
  void barrier();
  // Enqueues a GPU-side barrier across all ranks on `stream` (default: the rank's):
  // kernels after it see every rank's writes from kernels before it. Safe to capture
  // in a CUDA graph (its state lives on the device).
  void device_barrier(Stream stream = nullptr);
  // Host values: root's value, on every rank.
  template <class T> T broadcast(const T& value, int root) {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast needs a trivially copyable type");
    T out = value;
    broadcast_host(&out, sizeof(T), root);
    return out;
  }
  template <class T> std::vector<T> all_gather(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "all_gather needs a trivially copyable type");
    std::vector<T> out(static_cast<std::size_t>(world()));
    all_gather_host(&value, out.data(), sizeof(T));
    return out;
  }
  void broadcast_host(void* data, std::size_t bytes, int root);
  void all_gather_host(const void* mine, void* all, std::size_t bytes);
  // Heap buffers: root's bytes at `symmetric_ptr` copied into every rank's twin.
  void broadcast(void* symmetric_ptr, std::size_t bytes, int root);
  template <class T> void broadcast(Tensor<T>& t, int root);

  // --- tracing (Options::trace, IRIS_TRACE) -------------------------------------------------
  bool tracing() const;
  // Records a host span [begin_ns, end_ns) of trace_clock_ns() time named `name` (a no-op
  // when tracing is off).
  void trace_span(std::string_view name, std::int64_t begin_ns, std::int64_t end_ns);
  // The trace's clock: nanoseconds of the system clock.
  static std::int64_t trace_clock_ns();

  // --- modules and launches ------------------------------------------------------------
  Module load_module(std::span<const std::byte> code, const std::string& name = "<memory>");
  Module load_module(const std::filesystem::path& file);
  // Launches `kernel(device_context(), args...)`. A Tensor<T> argument passes its
  // T*. Argument count and sizes are checked against the kernel when the driver can
  // tell (iris::Error naming the parameter otherwise).
  template <class... Args> void launch(const Kernel& kernel, const LaunchConfig& cfg, const Args&... args);
  void launch_raw(const Kernel& kernel, const LaunchConfig& cfg, void** args, const std::size_t* arg_sizes,
                  std::size_t nargs);

  struct Impl;

 private:
  friend int run(const Options&, const std::function<void(Context&)>&);
  friend class Program;
  // Names the device events of the irisc kernel `name` in the trace.
  void trace_kernel(const std::string& name);
  explicit Context(std::unique_ptr<Impl> impl);
  void* alloc_tensor(const Shape& shape, DType dtype, std::size_t* numel);
  void* heap_alloc_collective(std::size_t bytes, std::size_t alignment);
  void fill(void* ptr, DType dtype, std::size_t n, double value);
  void fill_arange(void* ptr, DType dtype, std::size_t n);
  void fill_random(void* ptr, DType dtype, std::size_t n, int kind, std::uint64_t seed, std::int64_t lo, std::int64_t hi);
  std::unique_ptr<Impl> impl_;
};

// Runs `body` once per rank and returns a process exit code (0: every rank returned).
// Under mpirun: this process is one rank. Otherwise: options.ranks threads (one per
// GPU by default), each with its own Context. An exception in any rank is reported
// as "[iris r/w] error: ..." and wakes the other ranks; the result is then 1.
// Throws iris::NoDeviceError (before running anything) when there is no GPU.
int run(const Options& options, const std::function<void(Context&)>& body);

// Number of GPUs the driver sees (0 when there is no driver or no device).
int device_count();

}  // namespace iris
