// cuBLAS + NCCL through dlopen (see vendor.hpp), on the loaders of cublas.hpp and nccl.hpp.
#include "vendor.hpp"

#include "cublas.hpp"
#include "nccl.hpp"

namespace iris::samples {

struct VendorGemmAllGather::Impl {
  std::unique_ptr<Nccl> nccl;
  std::unique_ptr<Cublas> cublas;
  Stream stream = nullptr;
};

std::unique_ptr<VendorGemmAllGather> VendorGemmAllGather::create(Context& ctx, std::string* why) {
  auto impl = std::make_unique<Impl>();
  impl->nccl = Nccl::create(ctx, why);  // collective; null for every rank alike
  if (!impl->nccl) return nullptr;
  std::string mine;
  impl->cublas = Cublas::load(ctx.stream(), &mine);
  // Every rank reports the baseline skipped if any rank could not load cuBLAS.
  const std::vector<char> all_ok = ctx.all_gather(static_cast<char>(impl->cublas != nullptr));
  for (int r = 0; r < ctx.world(); ++r) {
    if (!all_ok[static_cast<std::size_t>(r)]) {
      *why = impl->cublas ? "rank " + std::to_string(r) + " could not load cuBLAS" : mine;
      return nullptr;
    }
  }
  impl->stream = ctx.stream();
  return std::unique_ptr<VendorGemmAllGather>(new VendorGemmAllGather(std::move(impl)));
}

VendorGemmAllGather::VendorGemmAllGather(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

VendorGemmAllGather::~VendorGemmAllGather() = default;

void VendorGemmAllGather::run(const bfloat16* a, const bfloat16* b, bfloat16* c_local, bfloat16* c_all, std::int64_t M,
                              std::int64_t N, std::int64_t K) {
  impl_->cublas->gemm(DType::bf16, a, b, c_local, M, N, K);
  impl_->nccl->all_gather(c_local, c_all, static_cast<std::size_t>(M * N), DType::bf16, impl_->stream);
}

}  // namespace iris::samples
