// The GPU kernel printer's tiles (see gpu_kernel_printer.hpp): a tile value as a
// register array over its layout, or slot by slot where it is used, and the stores of
// 2-D tiles outside the sm90 GEMM's epilogue.
#include "compiler/codegen/gpu_kernel_printer.hpp"

#include "compiler/tir/visit.hpp"

namespace irisc {

using namespace tir;

// Returns an array name holding the tile's slots (or a scalar broadcast expression
// is indexed by the caller through slot()).
std::string GpuKernelPrinter::tile(const Value& v, int depth) {
  if (v.kind == ValueKind::VarRef && !alias(v)) return var_name(v.var);
  // The GEMM template's product: the epilogue's accumulator registers.
  if (v.kind == ValueKind::Matmul && v.matmul == MatmulLowering::wgmma_ws) return "iris_acc";
  const std::string t = type_name(v.type.elem);
  const std::string L = layout_of(v.type);
  const std::string r = fresh("t");
  line(depth, t + " " + r + "[" + L + "::kPerThread];");
  if (const Value* a = alias(v)) {
    // Wanted whole after all: the value it stands for, slot by slot.
    const std::string e = slot(*a, depth);
    line(depth, "#pragma unroll");
    line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) " + r + "[s] = " + e + ";");
    return r;
  }
  switch (v.kind) {
    case ValueKind::Load: {
      const std::string other = v.operands.empty() ? "" : ", " + scalar(*v.operands[0], depth);
      if (v.view.rows) {
        line(depth, "iris::device::tile::load2d<" + L + ">(" + r + ", " + view_ptr(v.view, v.rank, depth) + ", " +
                        scalar(*v.view.ld, depth) + ", " + scalar(*v.view.row_extent, depth) + ", " +
                        scalar(*v.view.extent, depth) + other + ");");
        return r;
      }
      line(depth, "iris::device::tile::load<" + L + ">(" + r + ", " + view_ptr(v.view, v.rank, depth) + ", " +
                      scalar(*v.view.extent, depth) + other + ");");
      return r;
    }
    case ValueKind::Receive:
      line(depth, "iris::device::tile::receive<" + L + ">(ctx, " + r + ", " + view_ptr(v.view, nullptr, depth) + ", " +
                      scalar(*v.view.extent, depth) + ", iris::device::WaitSite{" + site_literal(v.range) + "});");
      return r;
    case ValueKind::LoadFlagged:
      line(depth, "iris::device::tile::load_flagged<" + L + ">(ctx, " + r + ", " + words_ptr(v.view, nullptr, v.type.elem, depth) + ", " +
                      scalar(*v.view.extent, depth) + ", (unsigned)" + scalar(*v.operands[0], depth) +
                      ", iris::device::WaitSite{" + site_literal(v.range) + "});");
      return r;
    case ValueKind::Matmul: {
      // Same arguments for every lowering; only the template differs, and the matrix-core
      // ones take the dynamic shared memory. B as a row panel (Bt[n, :]) is B given as
      // [N, K]: its valid columns are the panel's valid rows.
      const bool nk = v.view_b.slice_dim == 1;
      const std::string args = std::to_string(threads_) + (nk ? ", true>" : ">");
      const bool staged = v.matmul == MatmulLowering::mma_sync || v.matmul == MatmulLowering::mfma;
      const std::string fn = v.matmul == MatmulLowering::mma_sync ? "matmul_mma<" + L + ", " + args
                             : v.matmul == MatmulLowering::mfma   ? "matmul_mfma<" + L + ", " + args
                                                                  : "matmul<" + L + ", 16, " + args;
      const std::string b_args = view_ptr(v.view_b, nullptr, depth) + ", " + scalar(*v.view_b.ld, depth) + ", " +
                                 scalar(nk ? *v.view_b.row_extent : *v.view_b.extent, depth) + ", " +
                                 scalar(*v.view.full, depth) + (staged ? ", iris_dynamic_smem" : "");
      if (!v.view.gathered) {
        line(depth, "iris::device::tile::" + fn + "(" + r + ", " + view_ptr(v.view, nullptr, depth) + ", " +
                        scalar(*v.view.ld, depth) + ", " + scalar(*v.view.row_extent, depth) + ", " + b_args + ");");
        return r;
      }
      gathered_matmul(v, r, "iris::device::tile::" + fn, b_args, depth);
      return r;
    }
    case ValueKind::Reduce: {
      reduce_axis(v, r, depth);
      return r;
    }
    case ValueKind::Fill: {
      const std::string x = scalar(*v.operands[0], depth);
      line(depth, "#pragma unroll");
      line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) " + r + "[s] = " + x + ";");
      return r;
    }
    case ValueKind::Iota: {
      const std::string start = range_part(*v.operands[0], true, depth);
      line(depth, "#pragma unroll");
      line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) " + r + "[s] = " + start + " + " + L + "::elem(s);");
      return r;
    }
    case ValueKind::Atomic: {
      const std::vector<std::string> ops = slot_operands(v, depth);
      const std::string ptr = fresh("p");
      line(depth, type_name(k_.params[static_cast<std::size_t>(v.view.param)].elem) + std::string("* ") + ptr + " = " +
                      view_ptr_local(v.view, depth) + ";");
      const std::string valid = fresh("n");
      line(depth, "const long long " + valid + " = " + scalar(*v.view.extent, depth) + ";");
      const std::string to = fresh("to");
      line(depth, "const int " + to + " = " + rank_or_self(v.rank, depth) + ";");
      line(depth, "#pragma unroll");
      line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) {");
      line(depth + 1, r + "[s] = " + t + "(0);");
      std::vector<std::string> at_s;
      for (const std::string& o : ops) at_s.push_back(o);
      line(depth + 1, "if (" + L + "::elem(s) < " + valid + ") " + r + "[s] = " +
                          atomic_call(v, ptr + " + " + L + "::elem(s)", at_s, to) + ";");
      line(depth, "}");
      return r;
    }
    default: {
      std::string e = slot_expr(v, depth);
      line(depth, "#pragma unroll");
      line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) " + r + "[s] = " + e + ";");
      return r;
    }
  }
}

// Operands of a tile atomic, as expressions of slot `s`.
std::vector<std::string> GpuKernelPrinter::slot_operands(const Value& v, int depth) {
  std::vector<std::string> ops;
  for (const ValuePtr& o : v.operands) ops.push_back(slot(*o, depth));
  return ops;
}

// An expression for slot `s` of a tile-or-scalar value (materializing loads first).
std::string GpuKernelPrinter::slot(const Value& v, int depth) {
  if (!v.type.is_tile()) return scalar(v, depth);
  if (v.kind == ValueKind::Unary || v.kind == ValueKind::Binary || v.kind == ValueKind::Cast || v.kind == ValueKind::Select) {
    return slot_expr(v, depth);
  }
  if (v.kind == ValueKind::Broadcast) return broadcast_slot(v, depth);
  if (const Value* a = alias(v)) return slot(*a, depth);
  if (in_epilogue_ && v.kind == ValueKind::Load && v.view.rows) {
    // One slot read where it is used: the accumulators leave no registers for a
    // loaded tile.
    const std::string other = v.operands.empty() ? "" : ", " + scalar(*v.operands[0], depth);
    return "iris::device::tile::load2d_at<" + layout_of(v.type) + ">(" + view_ptr(v.view, v.rank, depth) + ", " +
           scalar(*v.view.ld, depth) + ", " + scalar(*v.view.row_extent, depth) + ", " + scalar(*v.view.extent, depth) +
           ", s" + other + ")";
  }
  return tile(v, depth) + "[s]";
}

const tir::Value* GpuKernelPrinter::alias(const Value& v) const {
  if (v.kind != ValueKind::VarRef || v.var < 0 || static_cast<std::size_t>(v.var) >= aliases_.size()) return nullptr;
  return aliases_[static_cast<std::size_t>(v.var)];
}

std::string GpuKernelPrinter::slot_expr(const Value& v, int depth) {
  switch (v.kind) {
    case ValueKind::Unary: return unop(v.unop, slot(*v.operands[0], depth), v.type.elem);
    case ValueKind::Binary: {
      const std::string a = slot(*v.operands[0], depth);  // first, as in scalar()
      return typed_binop(v.binop, v.operands[0]->type.elem, a, slot(*v.operands[1], depth));
    }
    case ValueKind::Cast: return cast(v.type.elem, v.operands[0]->type.elem, slot(*v.operands[0], depth));
    case ValueKind::Select: {
      const std::string c = slot(*v.operands[0], depth), a = slot(*v.operands[1], depth);
      return "(" + c + " ? " + a + " : " + slot(*v.operands[2], depth) + ")";
    }
    case ValueKind::Broadcast: return broadcast_slot(v, depth);
    default: return tile(v, depth) + "[s]";
  }
}

// ---- stores of tiles ----------------------------------------------------------------------

// A 2-D store outside the GEMM epilogue. A tile computed elementwise is computed where it
// is stored, slot by slot (tile::store2d_slots): no register array for it beside the
// tiles it comes from (a 64 x 256 f32 RMS normalization spilled); any other tile is
// stored from its array.
void GpuKernelPrinter::store2d(const Stmt& s, int depth) {
  const std::string L = layout2d(s.view.rows, s.view.size);
  if (slotwise(*s.value)) {
    const std::string T = type_name(k_.params[static_cast<std::size_t>(s.view.param)].elem);
    const std::string x = slot(*s.value, depth);
    line(depth, "iris::device::tile::store2d_slots<" + L + ">(" + view_ptr(s.view, s.rank, depth) + ", " +
                    scalar(*s.view.ld, depth) + ", " + scalar(*s.view.row_extent, depth) + ", " +
                    scalar(*s.view.extent, depth) + ", [&](int s) -> " + T + " { return " + x + "; });");
    return;
  }
  const std::string arr = store_source(*s.value, L, depth);
  line(depth, "iris::device::tile::store2d<" + L + ">(" + view_ptr(s.view, s.rank, depth) + ", " + arr + ", " +
                  scalar(*s.view.ld, depth) + ", " + scalar(*s.view.row_extent, depth) + ", " +
                  scalar(*s.view.extent, depth) + ");");
}

// Whether a stored tile is computed elementwise from other tiles (arithmetic, casts,
// selects), so that a store can compute each slot where it stores it; a variable or a
// load is whole already.
bool GpuKernelPrinter::slotwise(const Value& v) const {
  if (!v.type.is_tile()) return false;
  return v.kind == ValueKind::Unary || v.kind == ValueKind::Binary || v.kind == ValueKind::Cast ||
         v.kind == ValueKind::Select;
}

// The register array a tile store writes from: the tile itself, or a scalar
// broadcast over layout L.
std::string GpuKernelPrinter::store_source(const Value& v, const std::string& L, int depth) {
  if (v.type.is_tile()) return v.kind == ValueKind::VarRef ? var_name(v.var) : tile(v, depth);
  const std::string arr = fresh("t");
  const std::string x = scalar(v, depth);
  line(depth, std::string(type_name(v.type.elem)) + " " + arr + "[" + L + "::kPerThread];");
  line(depth, "#pragma unroll");
  line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) " + arr + "[s] = " + x + ";");
  return arr;
}

}  // namespace irisc
