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

  static constexpr std::size_t kHeapGranularity = std::size_t{2} << 20;  // 2 MiB

  // Defaults overridden by IRIS_HEAP_SIZE, IRIS_RANKS and IRIS_SHARE_GPUS (1/0).
  static Options from_env();

  // Throws iris::Error naming the bad field and what would be valid.
  void validate() const;
};

}  // namespace iris
