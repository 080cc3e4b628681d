// Matmul lowering choice (see select_matmul.hpp).
#include "compiler/passes/select_matmul.hpp"

#include <algorithm>

#include "compiler/tir/visit.hpp"
#include "templates/include/iris/device/tile/shapes.hpp"

namespace irisc {
namespace {

using namespace tir;

constexpr int kMmaThreads = 256;
// Static shared memory of a kernel (broadcast and reduction scratch) stays below this.
constexpr std::int64_t kStaticSharedReserve = 1024;

}  // namespace

int select_matmul(Module& module) {
  int count = 0;
  const Target& target = module.target ? *module.target : default_target();
  // Two programs per SM share its shared memory; one alone has all of it.
  const std::int64_t two_per_sm = target.max_shared_bytes / 2 - kStaticSharedReserve;
  const std::int64_t one_per_sm = target.max_shared_bytes - kStaticSharedReserve;
  for (Kernel& k : module.kernels) {
    // A kernel that runs as the sm90 GEMM template (select_gemm_mainloop) has its
    // matmul, shared memory and launch decided already.
    if (k.gemm.stages) continue;
    std::int64_t dynamic = 0;
    mutate(k.body, [&](ValuePtr& v) {
      if (v->kind != ValueKind::Matmul) return;
      const ScalarType t = k.params[static_cast<std::size_t>(v->view.param)].elem;
      const std::int64_t R = v->type.rows, C = v->type.size;
      // NVIDIA's mma.sync and AMD's MFMA take the same shapes: 16-bit operands, 256 threads,
      // rows and columns multiples of 32.
      const MatmulLowering tensor = target.mma_sync ? MatmulLowering::mma_sync
                                    : target.mfma   ? MatmulLowering::mfma
                                                    : MatmulLowering::simt;
      bool mma = tensor != MatmulLowering::simt && (t == ScalarType::bf16 || t == ScalarType::f16) &&
                 k.block_threads == kMmaThreads && R % 32 == 0 && C % 32 == 0;
      if (mma) {
        // Every matmul reuses the kernel's dynamic shared memory (each call ends with a
        // barrier), so the kernel needs the largest one's.
        const bool b_nk = v->view_b.slice_dim == 1;
        const std::int64_t bytes = tensor == MatmulLowering::mfma ? iris::device::tile::mfma_shared_bytes(R, C)
                                                                  : iris::device::tile::mma_shared_bytes(R, C, b_nk);
        if (bytes > one_per_sm) mma = false;
        else dynamic = std::max(dynamic, bytes);
      }
      v->matmul = mma ? tensor : MatmulLowering::simt;
      count += mma;
    });
    k.uses_mma = dynamic > 0;
    k.dynamic_shared_bytes = dynamic;
    if (k.uses_mma) k.min_blocks_per_sm = dynamic <= two_per_sm ? 2 : 1;
  }
  return count;
}

}  // namespace irisc
