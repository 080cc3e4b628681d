// How a job of ranks is set up: heap size, rank count, GPU sharing.
#pragma once

#include <cstddef>
#include <string>

namespace iris {

struct Options {
  // Bytes of symmetric heap per rank; a positive multiple of kHeapGranularity.
  std::size_t heap_bytes = std::size_t{1} << 30;
  // Thread mode: how many ranks this process runs (0: one per GPU). Under mpirun the
  // launcher sets the world; a different nonzero value here is ignored with a warning.
  int ranks = 0;
  // Let several ranks use one GPU (rank % device_count), e.g. to test 4 ranks on 1 GPU.
  bool share_gpus = false;
  // Seconds a device wait (a `wait` statement, the device barrier, any spin in the
  // device library) may last before it gives up and the host raises an iris::Error
  // naming the rank, kernel, flag and values; 0 waits forever.
  double wait_timeout = 60;
  // Seconds a host wait (synchronize, host barriers and exchanges) may last before it
  // raises an iris::Error saying what it waited on; 0 waits forever. A peer's failure
  // ends host waits at once, whatever this is.
  double host_timeout = 600;
  // Where to write a Perfetto / Chrome trace of the job (IRIS_TRACE): every rank's
  // device events (irisc kernels' programs, puts, signals and waits, with .iris lines)
  // and host spans (launches, barriers, allocations, JIT compiles), merged by rank 0 at
  // the end. Empty: no tracing, and no cost.
  std::string trace;
  // The backend ranks run on: "cuda" (NVIDIA GPUs), "hip" (AMD GPUs, through the HIP
  // runtime; not yet run on one), "host" (CPU threads: libiris's runtime, heap, tensors
  // and collectives; IRIS_BACKEND), or "" for IRIS_BACKEND, else cuda.
  std::string backend;
  // Host backend: report conflicting plain accesses to one heap element from two ranks
  // with nothing ordering them (no signal/wait, barrier or host collective between), as
  // an iris::Error naming both accesses (IRIS_CHECK_RACES=1). Slower; off by default.
  bool check_races = false;

  static constexpr std::size_t kHeapGranularity = std::size_t{2} << 20;  // 2 MiB

  // Defaults overridden by IRIS_HEAP_SIZE, IRIS_RANKS, IRIS_SHARE_GPUS (1/0),
  // IRIS_WAIT_TIMEOUT and IRIS_HOST_TIMEOUT (seconds), IRIS_TRACE (a file), IRIS_BACKEND,
  // IRIS_CHECK_RACES (1/0).
  static Options from_env();

  // Throws iris::Error naming the bad field and what would be valid.
  void validate() const;
};

}  // namespace iris
