// cuBLAS + NCCL through dlopen (see vendor.hpp). The few entry points used are declared
// here with the C ABI their headers give them; handles and streams are opaque pointers.
#include "vendor.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace iris::samples {
namespace {

// cublas_api.h / library_types.h values.
constexpr int kCublasOpN = 0;
constexpr int kCudaR16BF = 14;
constexpr int kCublasCompute32F = 68;
constexpr int kCublasGemmDefault = -1;
// nccl.h values.
constexpr int kNcclBfloat16 = 9;
struct NcclUniqueId {
  char internal[128];
};

using CublasCreate = int (*)(void** handle);
using CublasDestroy = int (*)(void* handle);
using CublasSetStream = int (*)(void* handle, void* stream);
using CublasGemmEx = int (*)(void* handle, int transa, int transb, int m, int n, int k, const void* alpha,
                             const void* A, int Atype, int lda, const void* B, int Btype, int ldb, const void* beta,
                             void* C, int Ctype, int ldc, int compute, int algo);
using NcclGetUniqueId = int (*)(NcclUniqueId* id);
using NcclCommInitRank = int (*)(void** comm, int nranks, NcclUniqueId id, int rank);
using NcclCommDestroy = int (*)(void* comm);
using NcclAllGather = int (*)(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream);
using NcclGetErrorString = const char* (*)(int result);

void* open_first(const char* env, std::initializer_list<const char*> names, std::string* why) {
  std::string tried;
  if (const char* path = std::getenv(env); path && *path) {
    if (void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return h;
    *why = std::string(env) + "=" + path + ": " + dlerror();
    return nullptr;
  }
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
    tried += (tried.empty() ? "" : ", ") + std::string(n);
  }
  *why = "cannot load " + tried + " (set " + env + " or LD_LIBRARY_PATH)";
  return nullptr;
}

template <class F>
F sym(void* lib, const char* name, std::string* why) {
  void* p = dlsym(lib, name);
  if (!p && why->empty()) *why = std::string("missing symbol ") + name;
  return reinterpret_cast<F>(p);
}

}  // namespace

struct VendorGemmAllGather::Impl {
  void* cublas_lib = nullptr;
  void* nccl_lib = nullptr;
  CublasCreate cublas_create = nullptr;
  CublasDestroy cublas_destroy = nullptr;
  CublasSetStream cublas_set_stream = nullptr;
  CublasGemmEx gemm = nullptr;
  NcclGetUniqueId get_id = nullptr;
  NcclCommInitRank init_rank = nullptr;
  NcclCommDestroy comm_destroy = nullptr;
  NcclAllGather all_gather = nullptr;
  NcclGetErrorString nccl_error = nullptr;
  void* handle = nullptr;
  void* comm = nullptr;
  void* stream = nullptr;
  int world = 1;

  bool load(std::string* why) {
    cublas_lib = open_first("IRIS_CUBLAS_LIBRARY", {"libcublas.so.13", "libcublas.so"}, why);
    if (!cublas_lib) return false;
    nccl_lib = open_first("IRIS_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"}, why);
    if (!nccl_lib) return false;
    cublas_create = sym<CublasCreate>(cublas_lib, "cublasCreate_v2", why);
    cublas_destroy = sym<CublasDestroy>(cublas_lib, "cublasDestroy_v2", why);
    cublas_set_stream = sym<CublasSetStream>(cublas_lib, "cublasSetStream_v2", why);
    gemm = sym<CublasGemmEx>(cublas_lib, "cublasGemmEx", why);
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
  const bool ok = impl->load(&mine);
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
  if (int rc = impl->cublas_create(&impl->handle); rc != 0) throw Error("cublasCreate failed: status " + std::to_string(rc));
  if (int rc = impl->cublas_set_stream(impl->handle, impl->stream); rc != 0) {
    throw Error("cublasSetStream failed: status " + std::to_string(rc));
  }
  NcclUniqueId id{};
  if (ctx.rank() == 0) impl->nccl_check(impl->get_id(&id), "ncclGetUniqueId");
  id = ctx.broadcast(id, 0);
  impl->nccl_check(impl->init_rank(&impl->comm, ctx.world(), id, ctx.rank()), "ncclCommInitRank");
  return std::unique_ptr<VendorGemmAllGather>(new VendorGemmAllGather(std::move(impl)));
}

VendorGemmAllGather::VendorGemmAllGather(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

VendorGemmAllGather::~VendorGemmAllGather() {
  if (impl_->comm) impl_->comm_destroy(impl_->comm);
  if (impl_->handle) impl_->cublas_destroy(impl_->handle);
  // The libraries stay loaded: their own teardown runs at exit.
}

void VendorGemmAllGather::run(const bfloat16* a, const bfloat16* b, bfloat16* c_local, bfloat16* c_all, std::int64_t M,
                              std::int64_t N, std::int64_t K) {
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, keep OP_N.
  const float alpha = 1.f, beta = 0.f;
  const int rc = impl_->gemm(impl_->handle, kCublasOpN, kCublasOpN, static_cast<int>(N), static_cast<int>(M),
                             static_cast<int>(K), &alpha, b, kCudaR16BF, static_cast<int>(N), a, kCudaR16BF,
                             static_cast<int>(K), &beta, c_local, kCudaR16BF, static_cast<int>(N), kCublasCompute32F,
                             kCublasGemmDefault);
  if (rc != 0) throw Error("cublasGemmEx failed: status " + std::to_string(rc));
  impl_->nccl_check(impl_->all_gather(c_local, c_all, static_cast<std::size_t>(M * N), kNcclBfloat16, impl_->comm,
                                      impl_->stream),
                    "ncclAllGather");
}

}  // namespace iris::samples
