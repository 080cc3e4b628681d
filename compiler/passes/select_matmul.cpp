// Matmul lowering choice (see select_matmul.hpp).
#include "compiler/passes/select_matmul.hpp"

#include <map>
#include <utility>

#include "compiler/tir/visit.hpp"
#include "templates/include/iris/device/tile_shapes.hpp"

namespace irisc {
namespace {

using namespace tir;

constexpr std::int64_t kMmaSharedBudget = 40 * 1024;
constexpr int kMmaThreads = 256;
constexpr int kMmaBlocksPerSm = 2;

}  // namespace

int select_matmul(Module& module) {
  int count = 0;
  const bool target_mma = (module.target ? *module.target : default_target()).mma_sync;
  for (Kernel& k : module.kernels) {
    // One static buffer per (shape, operand type).
    std::map<std::pair<std::pair<std::int64_t, std::int64_t>, ScalarType>, std::int64_t> buffers;
    std::int64_t used = 0;
    mutate(k.body, [&](ValuePtr& v) {
      if (v->kind != ValueKind::Matmul) return;
      const ScalarType t = k.params[static_cast<std::size_t>(v->view.param)].elem;
      const std::int64_t R = v->type.rows, C = v->type.size;
      bool mma = target_mma && (t == ScalarType::bf16 || t == ScalarType::f16) && k.block_threads == kMmaThreads && R % 32 == 0 &&
                 C % 32 == 0;
      if (mma) {
        const auto key = std::make_pair(std::make_pair(R, C), t);
        if (!buffers.count(key)) {
          const std::int64_t bytes = iris::device::tile::mma_shared_bytes(R, C);
          if (used + bytes > kMmaSharedBudget) {
            mma = false;
          } else {
            buffers[key] = bytes;
            used += bytes;
          }
        }
      }
      v->matmul = mma ? MatmulLowering::mma_sync : MatmulLowering::simt;
      count += mma;
    });
    k.uses_mma = !buffers.empty();
    if (k.uses_mma) k.min_blocks_per_sm = kMmaBlocksPerSm;
  }
  return count;
}

}  // namespace irisc
