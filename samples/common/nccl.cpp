// NCCL through dlopen (see nccl.hpp). The entry points used are declared here with the
// C ABI nccl.h gives them; communicators and streams are opaque pointers, enums ints.
#include "nccl.hpp"

#include <cstdlib>
#include <vector>

#include "dynlib.hpp"

namespace iris::samples {
namespace {

// nccl.h values.
struct NcclUniqueId {
  char internal[128];
};
constexpr int kNcclInt32 = 2, kNcclUint32 = 3, kNcclInt64 = 4, kNcclUint64 = 5, kNcclFloat16 = 6, kNcclFloat32 = 7,
              kNcclBfloat16 = 9;
constexpr int kNcclSum = 0, kNcclMax = 2, kNcclMin = 3;

using GetVersion = int (*)(int* version);
using GetUniqueId = int (*)(NcclUniqueId* id);
using CommInitRank = int (*)(void** comm, int nranks, NcclUniqueId id, int rank);
using CommDestroy = int (*)(void* comm);
using GetErrorString = const char* (*)(int result);
using AllReduce = int (*)(const void* send, void* recv, std::size_t count, int dtype, int op, void* comm, void* stream);
using AllGather = int (*)(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream);
using ReduceScatter = int (*)(const void* send, void* recv, std::size_t count, int dtype, int op, void* comm,
                              void* stream);
using AlltoAll = int (*)(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream);
using Broadcast = int (*)(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm,
                          void* stream);
using Send = int (*)(const void* send, std::size_t count, int dtype, int peer, void* comm, void* stream);
using Recv = int (*)(void* recv, std::size_t count, int dtype, int peer, void* comm, void* stream);
using Group = int (*)();

int nccl_type(DType t) {
  switch (t) {
    case DType::f32: return kNcclFloat32;
    case DType::f16: return kNcclFloat16;
    case DType::bf16: return kNcclBfloat16;
    case DType::i32: return kNcclInt32;
    case DType::i64: return kNcclInt64;
    case DType::u32: return kNcclUint32;
    case DType::u64: return kNcclUint64;
  }
  throw Error("NCCL: no NCCL type for this dtype");
}

int nccl_op(ccl::ReduceOp op) {
  switch (op) {
    case ccl::ReduceOp::sum: return kNcclSum;
    case ccl::ReduceOp::max: return kNcclMax;
    case ccl::ReduceOp::min: return kNcclMin;
  }
  throw Error("NCCL: no NCCL reduction for this op");
}

}  // namespace

struct Nccl::Impl {
  void* lib = nullptr;
  GetVersion get_version = nullptr;
  GetUniqueId get_id = nullptr;
  CommInitRank init_rank = nullptr;
  CommDestroy comm_destroy = nullptr;
  GetErrorString error_string = nullptr;
  AllReduce all_reduce = nullptr;
  AllGather all_gather = nullptr;
  ReduceScatter reduce_scatter = nullptr;
  AlltoAll all_to_all = nullptr;  // null before NCCL 2.28: grouped send/recv instead
  Broadcast broadcast = nullptr;
  Send send = nullptr;
  Recv recv = nullptr;
  Group group_start = nullptr, group_end = nullptr;
  void* comm = nullptr;
  int rank = 0, world = 1;
  std::string version;

  bool load(std::string* why) {
    lib = open_first("IRIS_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"}, why);
    if (!lib) return false;
    get_version = sym<GetVersion>(lib, "ncclGetVersion", why);
    get_id = sym<GetUniqueId>(lib, "ncclGetUniqueId", why);
    init_rank = sym<CommInitRank>(lib, "ncclCommInitRank", why);
    comm_destroy = sym<CommDestroy>(lib, "ncclCommDestroy", why);
    error_string = sym<GetErrorString>(lib, "ncclGetErrorString", why);
    all_reduce = sym<AllReduce>(lib, "ncclAllReduce", why);
    all_gather = sym<AllGather>(lib, "ncclAllGather", why);
    reduce_scatter = sym<ReduceScatter>(lib, "ncclReduceScatter", why);
    broadcast = sym<Broadcast>(lib, "ncclBroadcast", why);
    send = sym<Send>(lib, "ncclSend", why);
    recv = sym<Recv>(lib, "ncclRecv", why);
    group_start = sym<Group>(lib, "ncclGroupStart", why);
    group_end = sym<Group>(lib, "ncclGroupEnd", why);
    all_to_all = reinterpret_cast<AlltoAll>(dlsym(lib, "ncclAlltoAll"));  // optional
    return why->empty();
  }

  void check(int rc, const char* what) const {
    if (rc != 0) throw Error(std::string(what) + " failed: " + (error_string ? error_string(rc) : std::to_string(rc)));
  }
};

std::unique_ptr<Nccl> Nccl::create(Context& ctx, std::string* why) {
  why->clear();
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const std::vector<int> devices = ctx.all_gather(ctx.device());
  for (int r = 1; r < ctx.world(); ++r) {
    for (int q = 0; q < r; ++q) {
      if (devices[static_cast<std::size_t>(r)] == devices[static_cast<std::size_t>(q)]) {
        *why = "ranks " + std::to_string(q) + " and " + std::to_string(r) + " share GPU " +
               std::to_string(devices[static_cast<std::size_t>(r)]) + ", which NCCL does not allow";
        return nullptr;
      }
    }
  }
  auto impl = std::make_unique<Impl>();
  std::string mine;
  const bool ok = impl->load(&mine);
  // Every rank must agree before NCCL's collective init, or the ones that loaded hang.
  const std::vector<char> all_ok = ctx.all_gather(static_cast<char>(ok));
  for (int r = 0; r < ctx.world(); ++r) {
    if (!all_ok[static_cast<std::size_t>(r)]) {
      *why = ok ? "rank " + std::to_string(r) + " could not load NCCL" : mine;
      return nullptr;
    }
  }
  int code = 0;
  impl->check(impl->get_version(&code), "ncclGetVersion");
  // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9, * 1000 before.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  impl->version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
  impl->rank = ctx.rank();
  impl->world = ctx.world();
  NcclUniqueId id{};
  if (ctx.rank() == 0) impl->check(impl->get_id(&id), "ncclGetUniqueId");
  id = ctx.broadcast(id, 0);
  impl->check(impl->init_rank(&impl->comm, ctx.world(), id, ctx.rank()), "ncclCommInitRank");
  return std::unique_ptr<Nccl>(new Nccl(std::move(impl)));
}

Nccl::Nccl(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Nccl::~Nccl() {
  // The library stays loaded: its own teardown runs at exit.
  if (impl_->comm) impl_->comm_destroy(impl_->comm);
}

const std::string& Nccl::version() const { return impl_->version; }

const char* Nccl::all_to_all_method() const {
  return impl_->all_to_all ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv";
}

void Nccl::all_reduce(const void* send, void* recv, std::size_t count, DType dtype, ccl::ReduceOp op, Stream stream) {
  impl_->check(impl_->all_reduce(send, recv, count, nccl_type(dtype), nccl_op(op), impl_->comm, stream),
               "ncclAllReduce");
}

void Nccl::all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, Stream stream) {
  impl_->check(impl_->all_gather(send, recv, send_count, nccl_type(dtype), impl_->comm, stream), "ncclAllGather");
}

void Nccl::reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype, ccl::ReduceOp op,
                          Stream stream) {
  impl_->check(impl_->reduce_scatter(send, recv, recv_count, nccl_type(dtype), nccl_op(op), impl_->comm, stream),
               "ncclReduceScatter");
}

void Nccl::all_to_all(const void* send, void* recv, std::size_t count, DType dtype, Stream stream) {
  const int t = nccl_type(dtype);
  if (impl_->all_to_all) {
    impl_->check(impl_->all_to_all(send, recv, count, t, impl_->comm, stream), "ncclAlltoAll");
    return;
  }
  // What NCCL's documentation gives for all-to-all before 2.28 (and nccl-tests does).
  const std::size_t slice = count * dtype_size(dtype);
  impl_->check(impl_->group_start(), "ncclGroupStart");
  for (int p = 0; p < impl_->world; ++p) {
    const std::size_t off = static_cast<std::size_t>(p) * slice;
    impl_->check(impl_->send(static_cast<const char*>(send) + off, count, t, p, impl_->comm, stream), "ncclSend");
    impl_->check(impl_->recv(static_cast<char*>(recv) + off, count, t, p, impl_->comm, stream), "ncclRecv");
  }
  impl_->check(impl_->group_end(), "ncclGroupEnd");
}

void Nccl::broadcast(const void* send, void* recv, std::size_t count, DType dtype, int root, Stream stream) {
  impl_->check(impl_->broadcast(send, recv, count, nccl_type(dtype), root, impl_->comm, stream), "ncclBroadcast");
}

}  // namespace iris::samples
