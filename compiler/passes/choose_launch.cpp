// Launch decisions (see choose_launch.hpp).
#include "compiler/passes/choose_launch.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "compiler/tir/gemm_loop.hpp"
#include "compiler/tir/visit.hpp"

namespace irisc {
namespace {

using namespace tir;

constexpr int kMaxThreads = 256;
constexpr std::int64_t kProgramsPerSm = 8;
// The most slots of a 2-D tile a thread holds where more threads can take it: a 64 x 256
// f32 tile over the 64 threads of its 64-element row sums held 256 a thread, 255
// registers and 6.5 KB of spills (ptxas, sm_90a), and compiled in 8.7 s.
constexpr std::int64_t kMostSlots2D = 64;

void decide(Kernel& k) {
  // A GEMM decision (select_gemm_mainloop) replaced this pass's launch: it is made
  // again after this one, on the launch decided now.
  if (k.gemm.stages) {
    k.min_blocks_per_sm = 0;
    k.dynamic_shared_bytes = 0;
  }
  forget_gemm(k);
  std::set<std::int64_t> sizes;
  std::set<std::pair<std::int64_t, std::int64_t>> sizes2;
  // The narrowest tensor element moved through a 1-D view of each tile size: its tiles'
  // accesses are 16 bytes of it (8 bf16 or f16 per thread and access, not 4).
  std::map<std::int64_t, int> narrowest;
  auto note_type = [&](const Type& t) {
    if (t.is_tile() && t.rows) sizes2.insert({t.rows, t.size});
    else if (t.is_tile()) sizes.insert(t.size);
  };
  auto note_view = [&](const View& v) {
    if (v.rows && v.size) sizes2.insert({v.rows, v.size});
    else if (v.size && v.slice_dim < 0) {
      sizes.insert(v.size);
      if (v.param >= 0 && v.param < static_cast<int>(k.params.size())) {
        const int bytes = byte_size(k.params[static_cast<std::size_t>(v.param)].elem);
        auto [it, fresh] = narrowest.emplace(v.size, bytes);
        if (!fresh) it->second = std::min(it->second, bytes);
      }
    }
  };
  bool tile_atomics = false, loops = false, persistent = false, flagged = false, matmuls = false, slots = false;
  walk(
      k.body,
      [&](const Stmt& s) {
        if (s.kind == StmtKind::ForBlocks) sizes.insert(s.step);
        flagged = flagged || s.kind == StmtKind::StoreFlagged;
        slots = slots || s.kind == StmtKind::Send;
        loops = loops || s.kind == StmtKind::ForBlocks || s.kind == StmtKind::ForTiles;
        persistent = persistent || s.persistent;
        note_view(s.view);
      },
      [&](const Value& v) {
        // A kernel that walks its work by `program` and `programs` itself (a range
        // loop from program in steps of programs) spreads it as a blocks loop does.
        loops = loops || (v.kind == ValueKind::BuiltinRef && (v.builtin == Builtin::program || v.builtin == Builtin::programs));
        note_type(v.type);
        note_view(v.view);
        tile_atomics = tile_atomics || (v.kind == ValueKind::Atomic && v.type.is_tile());
        flagged = flagged || v.kind == ValueKind::LoadFlagged;
        slots = slots || v.kind == ValueKind::Receive;
        matmuls = matmuls || v.kind == ValueKind::Matmul;
      });
  for (const Var& v : k.vars) note_type(v.type);

  int threads = kMaxThreads;
  for (std::int64_t s : sizes) threads = static_cast<int>(std::min<std::int64_t>(threads, s));
  // A small 1-D tile beside a large 2-D one (a row's sums beside its rows): more threads
  // than the 1-D tile has elements, so that the 2-D tile holds at most kMostSlots2D a
  // thread. The 1-D tile's layout is then partial (tile.hpp: the threads past its
  // elements hold nothing, masked in its loads, stores and reductions). Not where
  // data-and-flag words or per-element tile atomics move 1-D tiles, whose paths assume
  // whole layouts, nor beside a matmul, whose lowerings choose their own threads.
  if (!sizes2.empty() && !flagged && !tile_atomics && !matmuls) {
    std::int64_t largest = 0, smallest = kMaxThreads;
    for (auto [r, c] : sizes2) largest = std::max(largest, r * c), smallest = std::min(smallest, r * c);
    std::int64_t need = threads;
    while (need < kMaxThreads && largest / need > kMostSlots2D && need * 2 <= smallest) need *= 2;
    threads = static_cast<int>(need);
  }
  // Slots move the data's own accesses, whose widest is 16 bytes: a kernel that sends or
  // receives them (and has no 2-D tile) runs as few threads as give each 16 bytes of its
  // smallest tile, a warp at the least, so that small blocks (a small call spread over
  // many programs) still store and poll 16 bytes a thread (512 bf16: 64 threads of 8).
  if (slots && sizes2.empty() && !sizes.empty()) {
    const std::int64_t smallest = *sizes.begin();
    auto it = narrowest.find(smallest);
    const std::int64_t per_thread = it != narrowest.end() && it->second < 4 ? 16 / it->second : 4;
    std::int64_t want = 32;
    while (want * 2 <= threads && want * 2 * per_thread <= smallest) want *= 2;
    threads = static_cast<int>(std::min<std::int64_t>(threads, want));
  }
  k.block_threads = threads;
  k.layouts.clear();
  for (std::int64_t s : sizes) {
    auto it = narrowest.find(s);
    const std::int64_t widest = it != narrowest.end() && it->second < 4 ? 16 / it->second : 4;
    const int vec =
        tile_atomics ? 1 : static_cast<int>(std::min<std::int64_t>(widest, std::max<std::int64_t>(1, s / threads)));
    k.layouts.push_back({0, s, vec});
  }
  for (auto [r, c] : sizes2) k.layouts.push_back({r, c, 1});
  if (k.roles.empty()) {
    if (loops) {
      auto grid = std::make_shared<Value>();
      grid->kind = ValueKind::Binary;
      grid->type = Type::scalar(ScalarType::int_);
      grid->binop = BinOp::mul;
      grid->range = k.range;
      auto sms = int_value(ValueKind::BuiltinRef, 0, k.range);
      sms->builtin = Builtin::sms;
      ValuePtr per_sm = int_value(ValueKind::Const, kProgramsPerSm, k.range);
      if (persistent) {
        per_sm = int_value(ValueKind::BuiltinRef, 0, k.range);
        per_sm->builtin = Builtin::resident;
      }
      grid->operands = {sms, per_sm};
      k.grid = grid;
    } else {
      k.grid = int_value(ValueKind::Const, 1, k.range);
    }
  }
  k.layouts_chosen = true;
}

}  // namespace

int choose_launch(Module& module) {
  for (Kernel& k : module.kernels) decide(k);
  return static_cast<int>(module.kernels.size());
}

}  // namespace irisc
