// cuBLAS + NCCL through dlopen (see vendor.hpp). The few entry points used are declared
// here with the C ABI their headers give them; handles and streams are opaque pointers.
#include "vendor.hpp"

#include <cstdlib>
#include <cstring>

#include "cublas.hpp"
#include "dynlib.hpp"

namespace iris::samples {
namespace {

// nccl.h values.
constexpr int kNcclBfloat16 = 9;
struct NcclUniqueId {
  char internal[128];
};

using NcclGetUniqueId = int (*)(NcclUniqueId* id);
using NcclCommInitRank = int (*)(void** comm, int nranks, NcclUniqueId id, int rank);
using NcclCommDestroy = int (*)(void* comm);
using NcclAllGather = int (*)(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream);
using NcclGetErrorString = const char* (*)(int result);

}  // namespace

struct VendorGemmAllGather::Impl {
  std::unique_ptr<Cublas> cublas;
  void* nccl_lib = nullptr;
  NcclGetUniqueId get_id = nullptr;
  NcclCommInitRank init_rank = nullptr;
  NcclCommDestroy comm_destroy = nullptr;
  NcclAllGather all_gather = nullptr;
  NcclGetErrorString nccl_error = nullptr;
  void* comm = nullptr;
  void* stream = nullptr;
  int world = 1;

  bool load(Stream s, std::string* why) {
    cublas = Cublas::load(s, why);
    if (!cublas) return false;
    nccl_lib = open_first("IRIS_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"}, why);
    if (!nccl_lib) return false;
    get_id = sym<NcclGetUniqueId>(nccl_lib, "ncclGetUniqueId", why);
    init_rank = sym<NcclCommInitRank>(nccl_lib, "ncclCommInitRank", why);
    comm_destroy = sym<NcclCommDestroy>(nccl_lib, "ncclCommDestroy", why);
    all_gather = sym<NcclAllGather>(nccl_lib, "ncclAllGather", why);
    nccl_error = sym<NcclGetErrorString>(nccl_lib, "ncclGetErrorString", why);
    return why->empty();
  }

  void nccl_check(int rc, const char* what) const {
    if (rc != 0) throw Error(std::string(what) + " failed: " + (nccl_error ? nccl_error(rc) : std::to_string(rc)));
  }
};

std::unique_ptr<VendorGemmAllGather> VendorGemmAllGather::create(Context& ctx, std::string* why) {
  // NVLink multicast (NVLS) stays off: it can take a shared host's GPUs down.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  // NCCL refuses two ranks of one communicator on one GPU (ranks sharing GPUs).
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
  const bool ok = impl->load(ctx.stream(), &mine);
  // Every rank must agree before NCCL's collective init, or the ones that loaded hang.
  const std::vector<char> all_ok = ctx.all_gather(static_cast<char>(ok));
  for (int r = 0; r < ctx.world(); ++r) {
    if (!all_ok[static_cast<std::size_t>(r)]) {
      *why = ok ? "rank " + std::to_string(r) + " could not load cuBLAS/NCCL" : mine;
      return nullptr;
    }
  }
  impl->world = ctx.world();
  impl->stream = ctx.stream();
  NcclUniqueId id{};
  if (ctx.rank() == 0) impl->nccl_check(impl->get_id(&id), "ncclGetUniqueId");
  id = ctx.broadcast(id, 0);
  impl->nccl_check(impl->init_rank(&impl->comm, ctx.world(), id, ctx.rank()), "ncclCommInitRank");
  return std::unique_ptr<VendorGemmAllGather>(new VendorGemmAllGather(std::move(impl)));
}

VendorGemmAllGather::VendorGemmAllGather(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

VendorGemmAllGather::~VendorGemmAllGather() {
  if (impl_->comm) impl_->comm_destroy(impl_->comm);
  // The libraries stay loaded: their own teardown runs at exit.
}

void VendorGemmAllGather::run(const bfloat16* a, const bfloat16* b, bfloat16* c_local, bfloat16* c_all, std::int64_t M,
                              std::int64_t N, std::int64_t K) {
  impl_->cublas->gemm(DType::bf16, a, b, c_local, M, N, K);
  impl_->nccl_check(impl_->all_gather(c_local, c_all, static_cast<std::size_t>(M * N), kNcclBfloat16, impl_->comm,
                                      impl_->stream),
                    "ncclAllGather");
}

}  // namespace iris::samples
