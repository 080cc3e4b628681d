// The GPU kernel printer's side of the sm90 GEMM template (see gemm_loop.hpp): the
// tiles loop as a call of the template, with the statements before the product as its
// prologue and the rest as its epilogue, and the epilogue's 2-D stores and reductions
// slot pair by slot pair.
#include "compiler/codegen/gpu_kernel_printer.hpp"

#include <algorithm>

namespace irisc {

using namespace tir;

// The GEMM kernel's tiles loop: the template runs the persistent tile loop and the
// mainloop, and calls the loop body (the epilogue) on its consumer threads once per tile
// with the tile's origin and its accumulators, which the body's first statement binds
// (tile() of the wgmma_ws matmul is `iris_acc`).
// A tiles loop's from_row as the tile rows its walk is rotated by, in [0, tiles along
// M): the tile row holding that row modulo `rows`. Printed once, before the loop.
std::string GpuKernelPrinter::from_row_shift(const Stmt& s, const std::string& rows, int depth) {
  const std::string r = fresh("from_row"), shift = fresh("shift");
  line(depth, "const long long " + r + " = " + scalar(*s.lo, depth) + ";");
  line(depth, "const long long " + shift + " = " + rows + " > 0 ? (" + r + " % " + rows + " + " + rows + ") % " + rows +
                  " / " + std::to_string(s.step) + "ll : 0;");
  return shift;
}

void GpuKernelPrinter::gemm_loop(const Stmt& s, int depth) {
  const std::string m = var_name(s.var), n = var_name(s.var2);
  const std::string rows = fresh("rows"), cols = fresh("cols"), across = fresh("across");
  const std::string bm = std::to_string(s.step) + "ll", bn = std::to_string(s.step2) + "ll";
  line(depth, "const long long " + rows + " = " + scalar(*s.hi, depth) + ", " + cols + " = " + scalar(*s.hi2, depth) + ";");
  if (s.var_t >= 0) line(depth, "const long long " + across + " = iris_div(" + cols + " + " + bn + " - 1, " + bn + ");");
  const std::string k = scalar(*gemm_->matmul->view.full, depth);
  const auto ranges = [&] {
    line(depth + 1, "const long long " + m + "_start = iris_m0;");
    line(depth + 1, "const long long " + m + "_extent = " + rows + " - " + m + "_start < " + bm + " ? " + rows + " - " + m + "_start : " + bm + ";");
    line(depth + 1, "const long long " + n + "_start = iris_n0;");
    line(depth + 1, "const long long " + n + "_extent = " + cols + " - " + n + "_start < " + bn + " ? " + cols + " - " + n + "_start : " + bn + ";");
  };
  // A gathered from every rank: its maps, and the rows each rank holds.
  const std::string a = gemm_->a_gathered
                            ? "iris::device::sm90::GatheredA{iris_a_maps, (int)" +
                                  scalar(*k_.params[static_cast<std::size_t>(gemm_->a)].dims[0], depth) + ", ctx.world}"
                            : std::string("iris_a_map");
  // In a role the template walks the tiles over that role's programs; from_row rotates
  // the walk's tile rows.
  std::string run = "iris_gemm::run(" + a + ", iris_b_map, (int)" + rows + ", (int)" + cols + ", (int)" + k +
                    ", iris_dynamic_smem, ";
  const bool programs = gemm_->role >= 0 || s.lo;
  if (programs) {
    run += "iris::device::sm90::Programs{(int)iris_program, (int)iris_programs" +
           (s.lo ? ", (int)" + from_row_shift(s, rows, depth) : std::string()) + "}, ";
  }
  const std::string epilogue = "[&](float (&iris_acc)[iris_gemm::Acc::kPerThread], int iris_m0, int iris_n0) {";
  if (gemm_->prologue) {
    // The statements before the product, on the producer's thread alone (see gemm_loop.hpp).
    line(depth, run + "[&](int iris_m0, int iris_n0) {");
    ranges();
    in_prologue_ = true;
    for (std::size_t i = 0; i < gemm_->prologue; ++i) stmt(*s.body[i], depth + 1);
    in_prologue_ = false;
    line(depth, "}, " + epilogue);
  } else {
    line(depth, run + (programs ? "iris::device::sm90::NoPrologue{}, " : "") + epilogue);
  }
  ranges();
  if (s.var_t >= 0) {
    line(depth + 1, "const long long " + var_name(s.var_t) + " = (long long)(iris_m0 / " + std::to_string(s.step) + ") * " +
                        across + " + iris_n0 / " + std::to_string(s.step2) + ";");
  }
  in_epilogue_ = true;
  for (std::size_t i = gemm_->prologue; i < s.body.size(); ++i) stmt(*s.body[i], depth + 1);
  in_epilogue_ = false;
  line(depth, "});");
}

// A matmul of gathered(A)[m, :] outside the sm90 GEMM (the tile:: lowerings): the
// tile's rows come from each rank whose A holds some of them, one call per rank, each
// reading its rows alone (a_rows_from .. a_rows_valid) and adding to the calls before
// it. The pointer of a later rank's call sits before that rank's A by the rows it
// skips; they are never read. Rows past every rank's (world x M) read as 0.
void GpuKernelPrinter::gathered_matmul(const Value& v, const std::string& r, const std::string& fn,
                                       const std::string& b_args, int depth) {
  const Param& p = k_.params[static_cast<std::size_t>(v.view.param)];
  const std::string gm = fresh("gm"), ld = fresh("ld"), g0 = fresh("g0"), rows = fresh("rows"), q0 = fresh("q0"),
                    q1 = fresh("q1"), q = fresh("q"), lo = fresh("lo"), hi = fresh("hi");
  line(depth, "{");
  line(depth + 1, "const long long " + gm + " = " + scalar(*p.dims[0], depth + 1) + ", " + ld + " = " +
                      scalar(*v.view.ld, depth + 1) + ";");
  line(depth + 1, "const long long " + g0 + " = " + ld + " ? (" + scalar(*v.view.offset, depth + 1) + ") / " + ld +
                      " : 0, " + rows + " = iris_min(" + scalar(*v.view.row_extent, depth + 1) + ", " +
                      std::to_string(v.view.rows) + "ll);");
  line(depth + 1, "const int " + q0 + " = " + gm + " > 0 ? (int)iris_min(" + g0 + " / " + gm + ", (long long)ctx.world - 1) : 0;");
  line(depth + 1, "const int " + q1 + " = " + gm + " > 0 && " + rows + " > 0 ? (int)iris_min((" + g0 + " + " + rows + " - 1) / " +
                      gm + ", (long long)ctx.world - 1) : " + q0 + ";");
  line(depth + 1, "for (int " + q + " = " + q0 + "; " + q + " <= " + q1 + "; ++" + q + ") {");
  line(depth + 2, "const long long " + lo + " = iris_max((long long)" + q + " * " + gm + " - " + g0 + ", 0ll), " + hi +
                      " = iris_min(" + rows + ", (long long)(" + q + " + 1) * " + gm + " - " + g0 + ");");
  line(depth + 2, fn + "(" + r + ", iris::device::translate(ctx, " + param_symbol(p.name) + ", " + q + ") + (" + g0 +
                      " - (long long)" + q + " * " + gm + ") * " + ld + ", " + ld + ", " + hi + ", " + b_args + ", " + lo +
                      ", " + q + " != " + q0 + ");");
  line(depth + 1, "}");
  line(depth, "}");
}

// A 2-D store in the GEMM epilogue. The accumulators take most of the registers, so
// nothing else is held as a tile: each pair of slots (neighbouring columns of one row
// in the accumulator layout) is computed where it is stored and goes out as one store
// where aligned. The loop is written out here rather than in a device-library function
// taking the slots as a lambda: NVVM then keeps the accumulators in registers (with
// the lambda, or a helper per pair, ptxas spilled over 1 KiB on 128 x 256 bf16 tiles).
void GpuKernelPrinter::epilogue_store(const Stmt& s, int depth) {
  const ScalarType elem = k_.params[static_cast<std::size_t>(s.view.param)].elem;
  if (byte_size(elem) == 2 && holds_accumulators(*s.value)) {
    // The accumulators as they are, converted to 16 bits: the template's store_tile
    // stages them in shared memory and writes whole rows with 16-byte stores, where the
    // pair stores below would have each warp store touch 8 rows 16 bytes each.
    const auto tma = std::find_if(tma_stores_.begin(), tma_stores_.end(),
                                  [&](const tir::TmaStore& t) { return t.param == s.view.param; });
    if (tma == tma_stores_.end()) {
      line(depth, "iris_gemm::store_tile(iris_acc, " + view_ptr(s.view, s.rank, depth) + ", " + scalar(*s.view.ld, depth) +
                      ", " + scalar(*s.view.row_extent, depth) + ", " + scalar(*s.view.extent, depth) + ");");
      return;
    }
    // By TMA from the staging buffer where the launcher made the tensor's map (the
    // tile's origin in the tensor: the view's offset over its row stride), else as above.
    const Param& p = k_.params[static_cast<std::size_t>(s.view.param)];
    const std::string map = tma->every_rank ? "&iris_c_maps_" + p.name + ".rank[" + rank_or_self(s.rank, depth) + "]"
                                            : "&iris_c_map_" + p.name;
    const std::string off = fresh("off"), ld = fresh("ld");
    line(depth, "{");
    line(depth + 1, "const long long " + off + " = " + scalar(*s.view.offset, depth + 1) + ", " + ld + " = " +
                        scalar(*s.view.ld, depth + 1) + ";");
    line(depth + 1, "iris_gemm::store_tile_async(iris_acc, " + map + ", " + view_ptr(s.view, s.rank, depth + 1) + ", " + ld +
                        ", " + scalar(*s.view.row_extent, depth + 1) + ", " + scalar(*s.view.extent, depth + 1) + ", " +
                        "iris_div(" + off + ", " + ld + "), iris_rem(" + off + ", " + ld + "));");
    line(depth, "}");
    return;
  }
  epilogue_pairs(s.view, s.rank, *s.value, false, false, depth, [&](const std::string& cols, const std::string& pairs, int d) {
    line(d, "if (" + pairs + " && iris_j + 1 < " + cols + ") {");
    line(d + 1, "iris::device::tile::store_pair(iris_q, iris_v0, iris_v1);");
    line(d, "} else {");
    line(d + 1, "if (iris_j < " + cols + ") iris_q[0] = iris_v0;");
    line(d + 1, "if (iris_j + 1 < " + cols + ") iris_q[1] = iris_v1;");
    line(d, "}");
  });
}

// `c = c + load(v) as f32` (either order) in the GEMM epilogue, c the accumulators and
// v a 16-bit 2-D view: the template's add_tile loads the rows with coalesced 16-byte
// loads through shared memory and adds them slot by slot. Slot-by-slot loads in the
// accumulator layout (slot()) would touch 8 rows 4 bytes apiece per warp, and their
// addresses held across the unrolled slots spill. False where `v` is not of that form.
bool GpuKernelPrinter::epilogue_add(const Value& v, int depth) {
  if (v.kind != ValueKind::Binary || v.binop != BinOp::add || v.operands.size() != 2) return false;
  const auto is_acc = [&](const Value& x) { return x.kind == ValueKind::VarRef && x.var == acc_var_; };
  const Value* other = is_acc(*v.operands[0]) ? v.operands[1].get() : is_acc(*v.operands[1]) ? v.operands[0].get() : nullptr;
  if (!other || other->kind != ValueKind::Cast || other->type.elem != ScalarType::f32 || other->operands.size() != 1) {
    return false;
  }
  const Value& ld = *other->operands[0];
  if (ld.kind != ValueKind::Load || !ld.view.rows || !ld.operands.empty()) return false;
  if (byte_size(k_.params[static_cast<std::size_t>(ld.view.param)].elem) != 2) return false;
  line(depth, "iris_gemm::add_tile(iris_acc, " + view_ptr(ld.view, ld.rank, depth) + ", " + scalar(*ld.view.ld, depth) +
                  ", " + scalar(*ld.view.row_extent, depth) + ", " + scalar(*ld.view.extent, depth) + ");");
  return true;
}

// The walk of the GEMM epilogue's 2-D stores and reductions over pairs of slots
// (neighbouring columns of one row in the accumulator layout): in a block of its own,
// the view's pointer on rank `rank` (translated once), its row stride and valid rows
// and columns (32-bit: 64-bit compares per slot cost registers too), whether pairs are
// aligned for one access of twice the width, and a loop over the pairs that computes
// slot values iris_v0 and iris_v1 of `value` (negated where `negate`) and the pair's
// address iris_q, skipping rows past the valid ones (and pairs starting past the valid
// columns where `skip_cols`). `at_pair(cols, pairs, depth)` prints what happens at a
// pair; columns past `cols` are its to leave alone.
void GpuKernelPrinter::epilogue_pairs(const View& view, const ValuePtr& rank, const Value& value, bool negate,
                                      bool skip_cols, int depth, const std::function<void(const std::string&, const std::string&, int)>& at_pair) {
  const ScalarType elem = k_.params[static_cast<std::size_t>(view.param)].elem;
  const std::string L = layout2d(view.rows, view.size);
  const std::string T = type_name(elem);
  const std::string p = fresh("p"), ld = fresh("ld"), rows = fresh("rows"), cols = fresh("cols"), pairs = fresh("pairs");
  line(depth, "{");
  const std::string x0 = slot(value, depth + 1);
  const std::string x = negate ? "(" + T + ")0 - (" + x0 + ")" : x0;
  line(depth + 1, T + "* const " + p + " = " + view_ptr(view, rank, depth + 1) + ";");
  line(depth + 1, "const long long " + ld + " = " + scalar(*view.ld, depth + 1) + ";");
  line(depth + 1, "const int " + rows + " = (int)iris_min(" + scalar(*view.row_extent, depth + 1) + ", " +
                      std::to_string(view.rows) + "ll), " + cols + " = (int)iris_min(" + scalar(*view.extent, depth + 1) +
                      ", " + std::to_string(view.size) + "ll);");
  line(depth + 1, "const bool " + pairs + " = iris::device::tile::pairs_aligned(" + p + ", " + ld + ");");
  line(depth + 1, "#pragma unroll");
  line(depth + 1, "for (int iris_s = 0; iris_s < " + L + "::kPerThread; iris_s += 2) {");
  line(depth + 2, T + " iris_v0, iris_v1;");
  line(depth + 2, "{ const int s = iris_s; iris_v0 = " + x + "; }");
  line(depth + 2, "{ const int s = iris_s + 1; iris_v1 = " + x + "; }");
  line(depth + 2, "const int iris_i = " + L + "::row(iris_s), iris_j = " + L + "::col(iris_s);");
  // Pairs whose first column is past the valid ones too, for reductions (one test for
  // both: fewer registers held across the loop than a second test at the pair).
  line(depth + 2, "if (iris_i >= " + rows + (skip_cols ? " || iris_j >= " + cols : std::string()) + ") continue;");
  line(depth + 2, T + "* const iris_q = " + p + " + iris_i * " + ld + " + iris_j;");
  at_pair(cols, pairs, depth + 2);
  line(depth + 1, "}");
  line(depth, "}");
}

// Whether `v` is the GEMM's accumulators converted to its own type, nothing else.
bool GpuKernelPrinter::holds_accumulators(const Value& v) const {
  if (const Value* a = alias(v)) return holds_accumulators(*a);
  if (v.kind != ValueKind::Cast || v.operands.size() != 1) return false;
  const Value& x = *v.operands[0];
  if (const Value* a = alias(x)) return a->kind == ValueKind::Matmul;
  return (x.kind == ValueKind::Matmul && x.matmul == MatmulLowering::wgmma_ws) ||
         (x.kind == ValueKind::VarRef && x.var == acc_var_);
}

}  // namespace irisc
