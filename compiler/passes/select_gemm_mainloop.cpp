// The sm90 GEMM template choice (see select_gemm_mainloop.hpp).
#include "compiler/passes/select_gemm_mainloop.hpp"

#include "compiler/tir/gemm_loop.hpp"
#include "compiler/tir/visit.hpp"
#include "templates/include/iris/device/gemm/shapes.hpp"

namespace irisc {
namespace {

using namespace tir;
namespace gemm = iris::device::gemm;

constexpr int kGroupM = 16;
// Static shared memory of a kernel (broadcast and reduction scratch) stays below this.
constexpr std::int64_t kStaticSharedReserve = 1024;

// The deepest ring worth having per tile width, after the hand-written sm90 kernels
// (tools/iris-bench/gemm_kernels.cu: 4 stages for 128 x 256 tiles, 6 for 128 x 128): a
// wide tile keeps its consumers busy long enough per slice that a few slices in flight
// cover the loads, a narrow one needs more of them. Fewer are taken where these do not
// fit the shared memory.
struct StageCap {
  int bn, stages;
};
constexpr StageCap kMaxStages[] = {{64, 8}, {128, 6}, {192, 5}, {256, 4}};

int max_stages(int bn) {
  for (const StageCap& c : kMaxStages) {
    if (c.bn == bn) return c.stages;
  }
  return 0;
}

// ceil(bound / step), over launch values.
ValuePtr tiles_along(const ValuePtr& bound, std::int64_t step, SourceRange r) {
  return int_binary(BinOp::div, int_binary(BinOp::add, bound, int_value(ValueKind::Const, step - 1, r), r),
                int_value(ValueKind::Const, step, r), r);
}

bool decide(Kernel& k, const Target& target, bool tma_stores) {
  forget_gemm(k);  // one read from a listing is made again
  if (!target.wgmma || !target.tma) return false;
  GemmLoop g;
  if (!match_gemm_loop(k, &g).empty() || g.bm > 256 || g.bn > 256) return false;
  // The other roles keep what choose-launch gave them, so it must have run.
  if (g.role >= 0 && !k.layouts_chosen) return false;
  gemm::Sm90Shape shape{static_cast<int>(g.bm), static_cast<int>(g.bn), 64, 2, kGroupM};
  if (!gemm::sm90_shape_ok(shape)) return false;
  const std::int64_t budget = target.max_shared_bytes - kStaticSharedReserve;
  for (shape.stages = max_stages(shape.bn); shape.stages > 2 && gemm::sm90_shared_bytes(shape) > budget;) --shape.stages;
  if (gemm::sm90_shared_bytes(shape) > budget) return false;

  // Two programs per cluster along M share B's slices (each loads half, multicast to
  // both): for 128 x 256 tiles that cuts what every SM pulls from L2 per slice from 48
  // to 32 KiB, worth 5-10% on H100 (docs/performance.md). Not where M is known to give
  // one tile row: the second program would idle. Not for a gathered A either: a tile
  // whose rows span ranks takes a pass over K per rank, and the two programs of a
  // cluster must load B's slices in step.
  // Nor in a role: a cluster's two programs would have to be the same role's.
  const bool one_row = g.loop->hi->kind == ValueKind::Const && g.loop->hi->int_value <= g.bm;
  shape.cluster_m = g.bm == 128 && !one_row && !g.a_gathered && g.role < 0 ? 2 : 1;
  if (!gemm::sm90_shape_ok(shape)) shape.cluster_m = 1;

  mutate(k.body, [&](ValuePtr& v) {
    if (v.get() == g.matmul) v->matmul = MatmulLowering::wgmma_ws;
  });
  k.gemm = {shape.stages, shape.group_m, shape.cluster_m};
  k.gemm.tma_stores = tma_stores;
  // The other roles keep the threads and layouts choose_launch gave them; the GEMM's
  // only tiles are the accumulator's (gemm_loop.hpp's shape).
  std::vector<Layout> layouts;
  if (g.role >= 0) {
    k.gemm.role = g.role;
    k.gemm.others_threads = k.block_threads;
    for (const Layout& l : k.layouts) {
      if (l.rows != g.bm || l.cols != g.bn) layouts.push_back(l);
    }
  }
  layouts.push_back(Layout{g.bm, g.bn, 1, true});
  k.layouts = std::move(layouts);
  k.layouts_chosen = true;
  k.block_threads = gemm::sm90_threads(shape);
  k.min_blocks_per_sm = 1;
  k.dynamic_shared_bytes = gemm::sm90_shared_bytes(shape);
  k.uses_mma = false;
  if (g.role >= 0) return true;  // the roles' program counts are the grid
  const SourceRange r = k.range;
  auto sms = int_value(ValueKind::BuiltinRef, 0, r);
  sms->builtin = Builtin::sms;
  const ValuePtr& rows = g.loop->hi;
  const ValuePtr& cols = g.loop->hi2;
  if (not_at_launch(*rows, LaunchUse::grid) || not_at_launch(*cols, LaunchUse::grid)) {
    k.grid = sms;
  } else {
    // Whole clusters: tile rows rounded up to the cluster (libiris rounds the grid down
    // to whole clusters and to the clusters the device holds at once).
    ValuePtr tile_rows = tiles_along(rows, g.bm, r);
    if (shape.cluster_m > 1) {
      tile_rows = int_binary(BinOp::mul, tiles_along(tile_rows, shape.cluster_m, r), int_value(ValueKind::Const, shape.cluster_m, r), r);
    }
    k.grid = int_binary(BinOp::min, int_binary(BinOp::mul, tile_rows, tiles_along(cols, g.bn, r), r), sms, r);
  }
  return true;
}

}  // namespace

int select_gemm_mainloop(Module& module) {
  const Target& target = module.target ? *module.target : default_target();
  int count = 0;
  for (Kernel& k : module.kernels) count += decide(k, target, module.tma_stores);
  return count;
}

}  // namespace irisc
