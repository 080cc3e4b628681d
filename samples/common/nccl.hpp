// NCCL, loaded at run time, as the collectives baseline of iris-bench ccl: one
// communicator per rank over the job's ranks, and the five collectives of iris/ccl.hpp
// on raw device pointers, enqueued on a stream.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "iris/ccl.hpp"
#include "iris/iris.hpp"

namespace iris::samples {

class Nccl {
 public:
  // Collective. Returns null with `why` set, the same on every rank, when NCCL cannot
  // run this job: two ranks share a GPU (NCCL refuses that), or some rank cannot load
  // $IRIS_NCCL_LIBRARY, else libnccl.so.2 or libnccl.so from the loader's path. Sets
  // NCCL_NVLS_ENABLE=0 unless it is set (NVLink multicast can take a shared host's GPUs
  // down). Throws iris::Error when NCCL loads but its initialization fails.
  static std::unique_ptr<Nccl> create(Context& ctx, std::string* why);
  ~Nccl();
  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;

  // "2.27.3", from ncclGetVersion.
  const std::string& version() const;
  // How all_to_all runs: "ncclAlltoAll" (NCCL 2.28 and later) or "grouped ncclSend/ncclRecv".
  const char* all_to_all_method() const;

  // nccl.h's calls, with counts as nccl.h counts them; `dtype` is any iris DType.
  void all_reduce(const void* send, void* recv, std::size_t count, DType dtype, ccl::ReduceOp op, Stream stream);
  void all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, Stream stream);
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype, ccl::ReduceOp op,
                      Stream stream);
  // count elements to each rank: slice q of send goes to rank q, slice p of recv comes
  // from rank p. Out of place only.
  void all_to_all(const void* send, void* recv, std::size_t count, DType dtype, Stream stream);
  void broadcast(const void* send, void* recv, std::size_t count, DType dtype, int root, Stream stream);

  struct Impl;

 private:
  explicit Nccl(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace iris::samples
