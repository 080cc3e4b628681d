// The GPU kernel printer's reductions: of a tile to a scalar, of a 2-D tile along an
// axis (tile.hpp's reduce_axis), and the broadcasts that read a 1-D tile back over a
// 2-D one (tile.hpp's stage), with the shared memory they meet in.
#include "compiler/codegen/gpu_kernel_printer.hpp"

#include <algorithm>

#include "compiler/tir/visit.hpp"

namespace irisc {

using namespace tir;

// How a reduction of `elem` values folds: in acc_t (float for f16 and bf16), with `op`
// over a and b, from `ident` (the identity; for integer max and min the type's lowest
// and highest).
GpuKernelPrinter::Fold GpuKernelPrinter::fold_of(ReduceOp r, ScalarType elem) const {
  const bool half = elem == ScalarType::f16 || elem == ScalarType::bf16;
  const bool flt = is_float(elem);
  Fold f;
  f.acc_t = half ? "float" : type_name(elem);
  f.op = r == ReduceOp::sum ? "a + b" : r == ReduceOp::max ? "a > b ? a : b" : "a < b ? a : b";
  const std::string inf = float_from_bits(0x7f800000);
  const std::string lowest =
      "(" + f.acc_t + ")" + (is_signed(elem) ? "(1ull << " + std::to_string(8 * byte_size(elem) - 1) + ")" : "0");
  f.ident = r == ReduceOp::sum ? "(" + f.acc_t + ")0"
            : r == ReduceOp::max ? (flt ? "-" + inf : lowest)
                                 : (flt ? inf : "(" + f.acc_t + ")~" + lowest);
  return f;
}

std::string GpuKernelPrinter::reduce(const Value& v, int depth) {
  const Value& t = *v.operands[0];
  const std::string arr = tile(t, depth);
  const bool half = t.type.elem == ScalarType::f16 || t.type.elem == ScalarType::bf16;
  const Fold f = fold_of(v.reduce_op, t.type.elem);
  const std::string r = fresh("r");
  // A partial 1-D layout's slots past the tile's elements are skipped, and its fold
  // starts from the identity (choose_launch; a 2-D layout is always whole). Otherwise
  // integer max and min start from the thread's first slot, sums from 0.
  const std::string L = layout_of(t.type);
  const tir::Layout* lay = t.type.rows ? nullptr : k_.layout_of(t.type);
  const bool partial = lay && lay->cols < static_cast<std::int64_t>(threads_) * lay->vec;
  const std::string holds = partial ? "if (" + L + "::holds(s)) " : "";
  const std::string init = v.reduce_op == ReduceOp::sum        ? "0"
                           : is_float(t.type.elem) || partial ? f.ident
                                                               : "(" + f.acc_t + ")" + arr + "[0]";
  line(depth, f.acc_t + " " + r + " = " + init + ";");
  line(depth, "#pragma unroll");
  line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) " + holds + "{ " + f.acc_t + " a = " + r + ", b = (" +
                  f.acc_t + ")" + arr + "[s]; " + r + " = " + f.op + "; }");
  // The warp partials go through shared scratch in the accumulator's own type, so u64
  // max/min compare unsigned (the integer scratch is 8-byte slots, wide enough for all).
  const std::string scratch = is_float(t.type.elem) ? "iris_scratch_f" : "reinterpret_cast<" + f.acc_t + "*>(iris_scratch_i)";
  line(depth, r + " = iris::device::tile::block_reduce<" + std::to_string(threads_) + ">(" + r + ", " + scratch +
                  ", [](" + f.acc_t + " a, " + f.acc_t + " b) { return " + f.op + "; });");
  return half ? std::string(type_name(v.type.elem)) + "(" + r + ")" : r;
}

// The shared slots of the kernel's reductions along an axis (the most any one takes:
// tile.hpp's axis_scratch, over the block's threads; a role's fewer threads take no
// more), then a region of its own for each broadcast, which is read slot by slot where
// it is used (broadcast_offsets_).
std::int64_t GpuKernelPrinter::axis_scratch_slots() {
  std::int64_t most = 0;
  const std::int64_t t = k_.block_threads;
  std::vector<const Value*> broadcasts;
  walk(k_.body, [](const Stmt&) {}, [&](const Value& v) {
    if (v.kind == ValueKind::Reduce && v.axis >= 0) {
      const Type& in = v.operands[0]->type;
      const std::int64_t row_threads = std::min(in.size, t);
      most = std::max(most, v.axis == 1 ? in.rows * std::max<std::int64_t>(1, row_threads / 32) : std::max(in.size, t));
    } else if (v.kind == ValueKind::Broadcast) {
      broadcasts.push_back(&v);
    }
  });
  for (const Value* b : broadcasts) {
    if (broadcast_offsets_.count(b)) continue;
    broadcast_offsets_[b] = most;
    most += b->operands[0]->type.size;
  }
  return most;
}

// A reduction of a 2-D tile along an axis into the array `r` (tile.hpp's reduce_axis),
// its operand computed slot by slot as it is folded.
void GpuKernelPrinter::reduce_axis(const Value& v, const std::string& r, int depth) {
  const Value& t = *v.operands[0];
  const Fold f = fold_of(v.reduce_op, t.type.elem);
  const std::string e = slot(t, depth);
  line(depth, "iris::device::tile::reduce_axis<" + layout_of(t.type) + ", " + layout_of(v.type) + ", " +
                  std::to_string(v.axis) + ", " + std::to_string(threads_) + ", " + f.acc_t + ">(" + r +
                  ", [&](int s) { return (" + f.acc_t + ")(" + e + "); }, " + f.ident + ", reinterpret_cast<" + f.acc_t +
                  "*>(iris_axis_scratch), [](" + f.acc_t + " a, " + f.acc_t + " b) { return " + f.op + "; });");
}

// Slot s of a broadcast: its 1-D tile staged in the broadcast's own shared region, read
// at the slot's column (repeated over rows) or row (over columns).
std::string GpuKernelPrinter::broadcast_slot(const Value& v, int depth) {
  const auto at = broadcast_offsets_.find(&v);
  if (at == broadcast_offsets_.end()) internal_error("a broadcast with no scratch");
  const Value& in = *v.operands[0];
  const std::string t = type_name(v.type.elem);
  const std::string arr = tile(in, depth);
  const std::string region = fresh("bc");
  line(depth, t + "* const " + region + " = reinterpret_cast<" + t + "*>(iris_axis_scratch + " + std::to_string(at->second) + ");");
  line(depth, "iris::device::tile::stage<" + layout_of(in.type) + ", " + std::to_string(in.type.size) + ">(" + arr + ", " + region + ");");
  return region + "[" + layout_of(v.type) + (v.axis == 0 ? "::col(s)]" : "::row(s)]");
}

}  // namespace irisc
