// The GPU kernel printer (see gpu_kernel_printer.hpp).
#include "compiler/codegen/gpu_kernel_printer.hpp"

#include <algorithm>
#include <stdexcept>

#include "compiler/codegen/metadata.hpp"
#include "compiler/tir/visit.hpp"
#include "templates/include/iris/device/trace.hpp"
#include "templates/include/iris/device/gemm/shapes.hpp"

namespace irisc {

using namespace tir;

// User names never meet generated ones (slot counters, ctx, CUDA built-ins, C++
// keywords): parameters become p_<name>, size symbols s_<name>, kernels iris_k_<name>.
std::string param_symbol(const std::string& n) { return "p_" + n; }

std::string order_name(Order o) { return std::string("iris::device::Order::") + name(o); }
std::string scope_name(Scope s) { return std::string("iris::device::Scope::") + name(s); }

namespace {

std::string size_symbol(const std::string& n) { return "s_" + n; }

// Loops over ranks run 1 to kMaxRanks times with a bound only known at launch, which
// NVVM does not unroll by itself; unrolled, the accesses to different ranks issue back to
// back (04_atomic_add: 93% -> 95-96% of the hand-written kernel on 4 x H200).
constexpr const char* kRankLoopUnroll = "#pragma unroll 4";

// Whether `v` depends on the world size (a loop bounded by it is a loop over ranks).
bool mentions_world(const Value& v) {
  return any_value(v, [](const Value& x) { return x.kind == ValueKind::BuiltinRef && x.builtin == Builtin::world; });
}

}  // namespace

void GpuKernelPrinter::print() {
  threads_ = k_.block_threads;
  tir::GemmLoop g;
  if (k_.gemm.stages) {
    if (std::string why = tir::match_gemm_loop(k_, &g); !why.empty()) internal_error("a GEMM kernel of the wrong shape: " + why);
    gemm_ = g;
    tma_stores_ = tir::epilogue_tma_stores(k_, g);
  }
  const contract::Kernel& c = contract_;
  line(0, kernel_qualifiers() + " " + c.symbol + "(");
  // The signature follows the contract's argument list, which the launcher packs.
  std::string params;
  for (const contract::Arg& a : c.args) {
    params += params.empty() ? "    " : ",\n    ";
    switch (a.kind) {
      case contract::ArgKind::context: params += context_parameter(); break;
      case contract::ArgKind::param: {
        const Param& p = k_.params[static_cast<std::size_t>(a.index)];
        params += p.is_tensor ? std::string(type_name(p.elem)) + "* " + restrict_qualifier() + " " + param_symbol(p.name)
                              : std::string(type_name(p.elem)) + " " + param_symbol(p.name);
        break;
      }
      case contract::ArgKind::size:
        params += "iris_i64 " + size_symbol(k_.size_symbols[static_cast<std::size_t>(a.index)]);
        break;
      case contract::ArgKind::sms: params += "long long iris_sms"; break;
      case contract::ArgKind::tensor_map:
        params += tensor_map_parameter(map_name(a), a.role == contract::MapRole::a_gathered ||
                                                        a.role == contract::MapRole::c_every_rank);
        break;
    }
  }
  out_ += params + ") {\n";
  line(1, "(void)iris_sms;");
  if (gemm_) {
    const char* layout = gemm_->b_nk ? "nk" : "kn";
    line(1, "using iris_gemm = iris::device::sm90::Gemm<" + std::string(type_name(gemm_->elem)) + ", " +
                std::to_string(gemm_->bm) + ", " + std::to_string(gemm_->bn) + ", " + std::to_string(k_.gemm.stages) +
                ", " + std::to_string(k_.gemm.group_m) + ", iris::device::gemm::BLayout::" + layout + ", " +
                std::to_string(k_.gemm.cluster) + ">;");
  }
  // Beside a role running the GEMM template, the other roles run on the first
  // others_threads threads of their programs: their layouts are over those.
  const int others = gemm_ && gemm_->role >= 0 ? k_.gemm.others_threads : 0;
  const int spread = others ? others : threads_;
  for (const Layout& l : k_.layouts) {
    if (l.accumulator) {
      line(1, "using " + layout2d(l.rows, l.cols) + " = iris_gemm::Acc;");
    } else if (l.rows) {
      line(1, "using " + layout2d(l.rows, l.cols) + " = iris::device::tile::Layout2D<" + std::to_string(l.rows) + ", " +
                  std::to_string(l.cols) + ", " + std::to_string(spread) + ">;");
    } else {
      line(1, "using L" + std::to_string(l.cols) + " = iris::device::tile::Layout<" + std::to_string(l.cols) + ", " +
                  std::to_string(spread) + ", " + std::to_string(l.vec) + ">;");
    }
  }
  line(1, shared_qualifier() + " unsigned long long iris_bcast;");
  line(1, shared_qualifier() + " float iris_scratch_f[" + std::to_string(std::max(1, threads_ / 32)) + "];");
  line(1, shared_qualifier() + " long long iris_scratch_i[" + std::to_string(std::max(1, threads_ / 32)) + "];");
  line(1, "(void)iris_bcast; (void)iris_scratch_f; (void)iris_scratch_i;");
  if (const std::int64_t slots = axis_scratch_slots(); slots > 0) {
    // Reductions along an axis and broadcasts of tiles meet here (8-byte slots, each
    // read as the accumulator's type).
    line(1, shared_qualifier() + " long long iris_axis_scratch[" + std::to_string(slots) + "];");
  }
  // The GEMM template's ring holds 128-byte-swizzled TMA boxes: 1024-byte aligned.
  if (k_.dynamic_shared_bytes) line(1, dynamic_shared_declaration("iris_dynamic_smem", gemm_ ? 1024 : 16) + ";");
  // Outside roles `program` counts over the whole grid; each role block shadows both.
  line(1, "const long long iris_program = " + block_index() + ", iris_programs = " + grid_blocks() + ";");
  line(1, "(void)iris_program; (void)iris_programs;");
  const int kernel_line = line_of(k_.range);
  if (trace_events_) line(1, "iris::device::TraceCursor iris_trace;");
  trace_line(1, thread_index() + " == 0", "program_begin", kernel_line, "-1", "0");
  if (k_.roles.empty()) {
    stmts(k_.body, 1);
  } else {
    // Lets before/between roles run in every program; each role owns a block range.
    line(1, "long long iris_first = 0;");
    for (const StmtPtr& s : k_.body) {
      if (s->kind != StmtKind::Role) {
        stmt(*s, 1);
        continue;
      }
      const std::string n = "iris_n_" + std::to_string(s->role);
      line(1, "const long long " + n + " = " + scalar(*k_.roles[static_cast<std::size_t>(s->role)].programs, 1) + ";");
      line(1, "if ((long long)" + block_index() + " >= iris_first && (long long)" + block_index() + " < iris_first + " + n + ") {");
      line(2, "const long long iris_program = " + block_index() + " - iris_first, iris_programs = " + n + ";");
      line(2, "(void)iris_program; (void)iris_programs;");
      if (others && s->role != gemm_->role) {
        // Exited threads count as arrived at every later barrier of the program.
        line(2, "if (" + thread_index() + " >= " + std::to_string(others) + ") return;");
        threads_ = others;
      }
      stmts(s->body, 2);
      threads_ = k_.block_threads;
      if (gemm_ && s->role == gemm_->role) {
        // The template leaves its warpgroups with different register budgets (setmaxnreg):
        // code after it, reachable from there, would be held to the producer's 40
        // registers and spill. Nothing after a role concerns its programs.
        trace_line(2, thread_index() + " == 0", "program_end", kernel_line, "-1", "0");
        line(2, "return;");
      }
      line(1, "}");
      line(1, "iris_first += " + n + ";");
    }
  }
  trace_line(1, thread_index() + " == 0", "program_end", kernel_line, "-1", "0");
  line(0, "}");
}

int GpuKernelPrinter::line_of(SourceRange r) const {
  return source_ && r.begin < source_->text().size() ? static_cast<int>(source_->line_col(r.begin).line) : 0;
}

std::string GpuKernelPrinter::site_literal(const Stmt& s) const { return site_literal(s.range); }

std::string GpuKernelPrinter::site_literal(SourceRange r) const {
  std::string text = "kernel '" + k_.name + "'";
  if (source_ && r.begin < source_->text().size()) {
    const LineCol lc = source_->line_col(r.begin);
    std::string file = source_->name_of(r.begin);
    if (const auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
    std::string stmt(source_->slice(r));
    stmt = stmt.substr(0, stmt.find('\n'));
    if (stmt.size() > 40) stmt = stmt.substr(0, 37) + "...";
    text += " at " + file + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + stmt;
  }
  return cuda_string_literal(text);
}

void GpuKernelPrinter::trace_line(int depth, const std::string& cond, const std::string& kind, int at,
                                  const std::string& peer, const std::string& value) {
  if (!trace_events_) return;
  line(depth, (cond.empty() ? std::string() : "if (" + cond + ") ") + trace(kind, at, peer, value) + ";");
}

std::string GpuKernelPrinter::trace(const std::string& kind, int line, const std::string& peer,
                                    const std::string& value) const {
  return "iris_trace.record(ctx, iris::device::TraceKind::" + kind + ", " +
         std::to_string(iris::device::trace_kernel_id(k_.name.c_str())) + "u, " + std::to_string(line) + ", " + peer +
         ", (unsigned long long)(" + value + "))";
}

std::string GpuKernelPrinter::var_name(int v) const {
  return "v" + std::to_string(v) + "_" + k_.vars[static_cast<std::size_t>(v)].name; 
}

std::string GpuKernelPrinter::layout(std::int64_t size) const {
  if (!k_.layout_of(Type::tile(ScalarType::f32, size))) internal_error("no layout for a tile of " + std::to_string(size));
  return "L" + std::to_string(size);
}

std::string GpuKernelPrinter::layout2d(std::int64_t rows, std::int64_t cols) const {
  if (!k_.layout_of(Type::tile2d(ScalarType::f32, rows, cols))) {
    internal_error("no layout for a " + std::to_string(rows) + " x " + std::to_string(cols) + " tile");
  }
  return "L2_" + std::to_string(rows) + "x" + std::to_string(cols);
}

void GpuKernelPrinter::internal_error(const std::string& what) {
  throw std::logic_error("emit_cuda: " + what + " (a decision pass missed it)");
}

std::string GpuKernelPrinter::map_name(const contract::Arg& a) const {
  switch (a.role) {
    case contract::MapRole::a: return "iris_a_map";
    case contract::MapRole::a_gathered: return "iris_a_maps";
    case contract::MapRole::b_kn:
    case contract::MapRole::b_nk: return "iris_b_map";
    case contract::MapRole::c: return "iris_c_map_" + k_.params[static_cast<std::size_t>(a.index)].name;
    case contract::MapRole::c_every_rank: return "iris_c_maps_" + k_.params[static_cast<std::size_t>(a.index)].name;
  }
  return "iris_map";
}

// In the GEMM epilogue only the consumer warpgroups run (the producer's has left): they
// synchronize among themselves, and the first consumer thread does thread 0's work. The
// GEMM's prologue runs on the producer's thread 0 alone: no barrier, and it leads.
std::string GpuKernelPrinter::sync() const {
  if (in_prologue_) return "";  // one thread: the producer's
  return in_epilogue_ ? group_barrier(kEpilogueBarrier, threads_ - iris::device::gemm::kSm90ProducerThreads) : barrier();
}

// In the GEMM epilogue a store to a peer is already 64 independent stores per thread;
// unrolled ranks would only add registers to a kernel that has none to spare.
std::string GpuKernelPrinter::rank_loop_unroll() const { return in_epilogue_ ? "#pragma unroll 1" : kRankLoopUnroll; }

std::string GpuKernelPrinter::leader() const {
  return thread_index() + " == " + std::to_string(in_epilogue_ ? iris::device::gemm::kSm90ProducerThreads : 0);
}

std::string GpuKernelPrinter::layout_of(const Type& t) const {
  return t.rows ? layout2d(t.rows, t.size) : layout(t.size); 
}

// Pointer to the view's first element on `rank` (null: this rank).
std::string GpuKernelPrinter::view_ptr(const View& v, const ValuePtr& rank, int depth) {
  const std::string base = param_symbol(k_.params[static_cast<std::size_t>(v.param)].name);
  const std::string off = scalar(*v.offset, depth);
  if (!rank) return "(" + base + " + " + off + ")";
  return "(iris::device::translate(ctx, " + base + ", (int)" + scalar(*rank, depth) + ") + " + off + ")";
}

// Pointer to a data-and-flag view's first word: for 16-bit values the offset counts
// values, two to a word (sema: check_flagged.cpp), and its start is even.
std::string GpuKernelPrinter::words_ptr(const View& v, const ValuePtr& rank, ScalarType elem, int depth) {
  if (byte_size(elem) != 2) return view_ptr(v, rank, depth);
  const std::string base = param_symbol(k_.params[static_cast<std::size_t>(v.param)].name);
  const std::string off = "((" + scalar(*v.offset, depth) + ") >> 1)";
  if (!rank) return "(" + base + " + " + off + ")";
  return "(iris::device::translate(ctx, " + base + ", (int)" + scalar(*rank, depth) + ") + " + off + ")";
}

std::string GpuKernelPrinter::rank_or_self(const ValuePtr& rank, int depth) {
  return rank ? "(int)" + scalar(*rank, depth) : std::string("ctx.rank");
}

// A uniform scalar expression; may emit statements (reductions, thread-0 atomics).
std::string GpuKernelPrinter::scalar(const Value& v, int depth) {
  switch (v.kind) {
    case ValueKind::Const: return literal(v);
    case ValueKind::ParamRef: return param_symbol(k_.params[static_cast<std::size_t>(v.param)].name);
    case ValueKind::SizeRef: return size_symbol(k_.size_symbols[static_cast<std::size_t>(v.size)]);
    case ValueKind::VarRef: return var_name(v.var);
    case ValueKind::BuiltinRef:
      switch (v.builtin) {
        case Builtin::rank: return "(long long)ctx.rank";
        case Builtin::world: return "(long long)ctx.world";
        case Builtin::sms: return "iris_sms";
        case Builtin::program: return "iris_program";
        case Builtin::programs: return "iris_programs";
        case Builtin::resident: internal_error("a kernel body reads resident (the verifier rejects that)");
      }
      return "0";
    case ValueKind::RangeStart: return range_part(*v.operands[0], true, depth);
    case ValueKind::RangeExtent: return range_part(*v.operands[0], false, depth);
    case ValueKind::Unary: return unop(v.unop, scalar(*v.operands[0], depth), v.type.elem);
    case ValueKind::Binary: {
      // Left operand first: either may emit statements, and C++ leaves the order of
      // function arguments open (g++ and clang differ).
      const std::string a = scalar(*v.operands[0], depth);
      return typed_binop(v.binop, v.operands[0]->type.elem, a, scalar(*v.operands[1], depth));
    }
    case ValueKind::Cast: return cast(v.type.elem, v.operands[0]->type.elem, scalar(*v.operands[0], depth));
    case ValueKind::Select: {
      // In order, as for Binary: each operand may emit statements.
      const std::string c = scalar(*v.operands[0], depth), a = scalar(*v.operands[1], depth);
      return "(" + c + " ? " + a + " : " + scalar(*v.operands[2], depth) + ")";
    }
    case ValueKind::Load: return "(*" + view_ptr(v.view, v.rank, depth) + ")";
    case ValueKind::LoadFlagged:
      // Every thread polls the one word (uniform, as a scalar load is).
      return std::string("iris::device::load_flagged<") + type_name(v.type.elem) + ">(ctx, " + view_ptr(v.view, nullptr, depth) +
             ", (unsigned)" + scalar(*v.operands[0], depth) + ", iris::device::WaitSite{" + site_literal(v.range) + "})";
    case ValueKind::Reduce: return reduce(v, depth);
    case ValueKind::Atomic: {
      const std::string t = type_name(v.type.elem);
      const std::string r = fresh("a");
      // Operands, address and rank first, in every thread: they may emit statements
      // (a reduction's block_reduce synchronizes the block), which must not land in
      // the leader's branch.
      const std::vector<std::string> ops = scalar_operands(v, depth);
      const std::string ptr = view_ptr_local(v.view, depth);
      const std::string to = rank_or_self(v.rank, depth);
      line(depth, sync() + ";");
      line(depth, "if (" + leader() + ") {");
      line(depth + 1, t + " old = " + atomic_call(v, ptr, ops, to) + ";");
      line(depth + 1, "memcpy(&iris_bcast, &old, sizeof old);");
      line(depth, "}");
      line(depth, sync() + ";");
      line(depth, t + " " + r + ";");
      line(depth, "memcpy(&" + r + ", &iris_bcast, sizeof " + r + ");");
      return r;
    }
    default: return "0";
  }
}

std::vector<std::string> GpuKernelPrinter::scalar_operands(const Value& v, int depth) {
  std::vector<std::string> ops;
  for (const ValuePtr& o : v.operands) ops.push_back(scalar(*o, depth));
  return ops;
}

// Local pointer of a view (atomics translate through ctx themselves).
std::string GpuKernelPrinter::view_ptr_local(const View& v, int depth) {
  return view_ptr(v, nullptr, depth); 
}

std::string GpuKernelPrinter::atomic_call(const Value& v, const std::string& ptr, const std::vector<std::string>& ops,
                                          const std::string& to) {
  // The device library names its atomics after the TIR ops (iris::device::atomic_add, ...).
  std::string call = std::string("iris::device::atomic_") + name(v.atomic_op) + "<" + order_name(v.order) +
                     ", " + scope_name(v.scope) + ">(ctx, " + ptr;
  for (const std::string& o : ops) call += ", " + o;
  return call + ", " + to + ")";
}

std::string GpuKernelPrinter::range_part(const Value& r, bool start, int depth) {
  if (r.kind == ValueKind::VarRef) return var_name(r.var) + (start ? "_start" : "_extent");
  if (r.kind == ValueKind::Binary) {
    if (!start) return range_part(*r.operands[0], false, depth);
    return binop(r.binop, range_part(*r.operands[0], true, depth), scalar(*r.operands[1], depth));
  }
  return "0";
}

// ---- statements ---------------------------------------------------------------------------
void GpuKernelPrinter::stmts(const std::vector<StmtPtr>& body, int depth) {
  for (const StmtPtr& s : body) stmt(*s, depth);
}

void GpuKernelPrinter::assign_to(int var, const Value& v, int depth, bool declare) {
  const Var& x = k_.vars[static_cast<std::size_t>(var)];
  const std::string n = var_name(var);
  if (declare && in_epilogue_ && gemm_ && gemm_->let->var == var && !assigned(gemm_->loop->body, var)) {
    // `let c = matmul(...) [as T]`, never reassigned: c is the accumulators (cast), slot
    // by slot where it is used. A copy would need a second register tile.
    if (aliases_.size() < k_.vars.size()) aliases_.resize(k_.vars.size());
    aliases_[static_cast<std::size_t>(var)] = &v;
    return;
  }
  if (declare && in_epilogue_ && gemm_ && gemm_->let->var == var && v.kind == ValueKind::Matmul) {
    // Reassigned, but of the accumulators' type: c names the accumulator registers,
    // which the template overwrites on the next tile anyway.
    line(depth, "float (&" + n + ")[" + layout_of(x.type) + "::kPerThread] = iris_acc;");
    acc_var_ = var;
    return;
  }
  if (x.type.is_tile()) {
    const std::string L = layout_of(x.type);
    std::string e = slot(v, depth);
    if (declare) line(depth, std::string(type_name(x.type.elem)) + " " + n + "[" + L + "::kPerThread];");
    line(depth, "#pragma unroll");
    line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) " + n + "[s] = " + e + ";");
    return;
  }
  if (x.type.kind == TypeKind::Range) {
    const std::string st = range_part(v, true, depth), ex = range_part(v, false, depth);
    // Not const: a range let may be assigned again (`j = i`).
    line(depth, std::string(declare ? "long long " : "") + n + "_start = " + st + ";");
    line(depth, std::string(declare ? "long long " : "") + n + "_extent = " + ex + ";");
    return;
  }
  const std::string e = scalar(v, depth);
  line(depth, (declare ? std::string(type_name(x.type.elem)) + " " : std::string()) + n + " = " + e + ";");
}

void GpuKernelPrinter::stmt(const Stmt& s, int depth) {
  switch (s.kind) {
    case StmtKind::Let: assign_to(s.var, *s.value, depth, true); return;
    case StmtKind::Assign:
      if (in_epilogue_ && s.var == acc_var_ && epilogue_add(*s.value, depth)) return;
      assign_to(s.var, *s.value, depth, false);
      return;
    case StmtKind::Store: {
      if (s.rank) trace_line(depth, thread_index() + " == 0", "put", line_of(s.range), rank_or_self(s.rank, depth), "0");
      if (s.view.rows) return in_epilogue_ ? epilogue_store(s, depth) : store2d(s, depth);
      if (s.view.size) {
        const std::string L = layout(s.view.size);
        const std::string arr = store_source(*s.value, L, depth);
        line(depth, "iris::device::tile::store<" + L + ">(" + view_ptr(s.view, s.rank, depth) + ", " + arr + ", " +
                        scalar(*s.view.extent, depth) + ");");
      } else {
        const std::string x = scalar(*s.value, depth);
        const std::string p = view_ptr(s.view, s.rank, depth);
        line(depth, sync() + ";");
        line(depth, "if (" + leader() + ") *" + p + " = " + x + ";");
      }
      return;
    }
    case StmtKind::StoreFlagged: {
      if (s.rank) trace_line(depth, thread_index() + " == 0", "put", line_of(s.range), rank_or_self(s.rank, depth), "0");
      const std::string flag = "(unsigned)" + scalar(*s.flag, depth);
      if (s.view.size) {
        const std::string L = layout(s.view.size);
        const std::string arr = store_source(*s.value, L, depth);
        line(depth, "iris::device::tile::store_flagged<" + L + ">(" + words_ptr(s.view, s.rank, s.value->type.elem, depth) + ", " + arr + ", " +
                        scalar(*s.view.extent, depth) + ", " + flag + ");");
      } else {
        const std::string x = scalar(*s.value, depth);
        const std::string p = view_ptr(s.view, s.rank, depth);
        line(depth, sync() + ";");
        line(depth, "if (" + leader() + ") iris::device::store_flagged(" + p + ", " + x + ", " + flag + ");");
      }
      return;
    }
    case StmtKind::Send: {
      if (s.rank) trace_line(depth, thread_index() + " == 0", "put", line_of(s.range), rank_or_self(s.rank, depth), "0");
      const std::string L = layout(s.view.size);
      const std::string arr = store_source(*s.value, L, depth);
      line(depth, "iris::device::tile::send<" + L + ">(" + view_ptr(s.view, s.rank, depth) + ", " + arr + ", " +
                      scalar(*s.view.extent, depth) + ");");
      return;
    }
    case StmtKind::Signal: {
      const std::string x = scalar(*s.value, depth);
      const std::string p = view_ptr_local(s.view, depth);
      // The barrier orders every thread's earlier writes before thread 0's release.
      line(depth, sync() + ";");
      const std::string to = rank_or_self(s.rank, depth);
      line(depth, "if (" + leader() + ") {");
      line(depth + 1, signal_call(s, p, x, to) + ";");
      trace_line(depth + 1, "", "signal", line_of(s.range), to, x);
      line(depth, "}");
      return;
    }
    case StmtKind::Fence:
      // Every thread's earlier writes come before the barrier; each thread's fence then
      // orders them (and its own) before whatever any thread writes after it.
      line(depth, sync() + ";");
      line(depth, std::string("iris::device::fence<") + scope_name(s.scope) + ">();");
      return;
    case StmtKind::Wait: {
      const std::string x = scalar(*s.value, depth);
      const std::string p = view_ptr_local(s.view, depth);
      const int at = line_of(s.range);
      line(depth, "if (" + leader() + ") {");
      trace_line(depth + 1, "", "wait_begin", at, "-1", x);
      const std::string wait = wait_call(s, p, x);
      if (trace_events_) {
        line(depth + 1, "const auto iris_seen = " + wait + ";");
        trace_line(depth + 1, "", "wait_end", at, "-1", "iris_seen");
      } else {
        line(depth + 1, wait + ";");
      }
      line(depth, "}");
      line(depth, sync() + ";");
      return;
    }
    case StmtKind::Eval: {
      if (s.value->kind == ValueKind::Atomic && s.value->view.rows) {
        tile_red_add(*s.value, depth);
      } else if (discarded_add(*s.value)) {
        red_add(*s.value, depth);
      } else if (s.value->type.is_tile()) {
        tile(*s.value, depth);
      } else {
        line(depth, "(void)" + scalar(*s.value, depth) + ";");
      }
      return;
    }
    case StmtKind::ForBlocks: {
      const std::string n = var_name(s.var);
      const std::string bound = fresh("bound");
      const std::string b = std::to_string(s.step);
      line(depth, "const long long " + bound + " = " + scalar(*s.hi, depth) + ";");
      line(depth, "for (long long " + n + "_start = iris_program * " + b + "ll; " + n + "_start < " + bound + "; " + n +
                      "_start += iris_programs * " + b + "ll) {");
      line(depth + 1, "const long long " + n + "_extent = " + bound + " - " + n + "_start < " + b + "ll ? " + bound +
                          " - " + n + "_start : " + b + "ll;");
      stmts(s.body, depth + 1);
      line(depth, "}");
      return;
    }
    case StmtKind::ForTiles: {
      if (gemm_ && gemm_->loop == &s) return gemm_loop(s, depth);
      const std::string m = var_name(s.var), n = var_name(s.var2);
      const std::string rows = fresh("rows"), cols = fresh("cols"), across = fresh("across"), total = fresh("total"),
                        t = fresh("tile");
      const std::string bm = std::to_string(s.step) + "ll", bn = std::to_string(s.step2) + "ll";
      line(depth, "const long long " + rows + " = " + scalar(*s.hi, depth) + ", " + cols + " = " + scalar(*s.hi2, depth) + ";");
      line(depth, "const long long " + across + " = iris_div(" + cols + " + " + bn + " - 1, " + bn + ");");
      line(depth, "const long long " + total + " = iris_div(" + rows + " + " + bm + " - 1, " + bm + ") * " + across + ";");
      // from_row: the walk's tile rows rotated by `shift` (the tile row holding that row).
      const std::string shift = s.lo ? from_row_shift(s, rows, depth) : std::string();
      line(depth, "for (long long " + t + " = iris_program; " + t + " < " + total + "; " + t + " += iris_programs) {");
      if (s.lo) {
        line(depth + 1, "const long long " + m + "_start = iris_rem(iris_div(" + t + ", " + across + ") + " + shift + ", iris_div(" +
                            rows + " + " + bm + " - 1, " + bm + ")) * " + bm + ";");
      } else {
        line(depth + 1, "const long long " + m + "_start = iris_div(" + t + ", " + across + ") * " + bm + ";");
      }
      line(depth + 1, "const long long " + m + "_extent = " + rows + " - " + m + "_start < " + bm + " ? " + rows + " - " + m + "_start : " + bm + ";");
      line(depth + 1, "const long long " + n + "_start = iris_rem(" + t + ", " + across + ") * " + bn + ";");
      line(depth + 1, "const long long " + n + "_extent = " + cols + " - " + n + "_start < " + bn + " ? " + cols + " - " + n + "_start : " + bn + ";");
      if (s.var_t >= 0) {
        line(depth + 1, "const long long " + var_name(s.var_t) + " = " +
                            (s.lo ? m + "_start / " + bm + " * " + across + " + " + n + "_start / " + bn : t) + ";");
      }
      stmts(s.body, depth + 1);
      line(depth, "}");
      return;
    }
    case StmtKind::ForRanks: {
      if (flag_loop_in_parallel(s, depth)) return;
      const std::string n = var_name(s.var);
      line(depth, rank_loop_unroll());
      if (s.peers_only) {
        line(depth, "for (long long iris_k = 1; iris_k < ctx.world; ++iris_k) {");
        line(depth + 1, "const long long " + n + " = iris_rem(ctx.rank + iris_k, (long long)ctx.world);");
      } else {
        line(depth, "for (long long " + n + " = 0; " + n + " < ctx.world; ++" + n + ") {");
      }
      stmts(s.body, depth + 1);
      line(depth, "}");
      return;
    }
    case StmtKind::ForRange: {
      if (flag_loop_in_parallel(s, depth)) return;
      // The bounds are evaluated once, before the loop (as the host backend does): a
      // body that changes what `hi` reads does not change the trip count.
      const std::string n = var_name(s.var);
      const std::string lo = scalar(*s.lo, depth), hi = scalar(*s.hi, depth);
      const std::string bound = fresh("hi");
      line(depth, "const long long " + bound + " = " + hi + ";");
      std::string step = "++" + n, test;
      if (s.stride) {
        // A step that is not positive runs the loop no times.
        const std::string by = fresh("step");
        line(depth, "const long long " + by + " = " + scalar(*s.stride, depth) + ";");
        step = n + " += " + by;
        test = by + " > 0 && ";
      }
      if (mentions_world(*s.lo) || mentions_world(*s.hi)) line(depth, rank_loop_unroll());
      line(depth, "for (long long " + n + " = " + lo + "; " + test + n + " < " + bound + "; " + step + ") {");
      stmts(s.body, depth + 1);
      line(depth, "}");
      return;
    }
    case StmtKind::ForChunks: {
      const std::string n = var_name(s.var);
      const std::string lo = scalar(*s.lo, depth);
      const std::string bound = fresh("bound");
      const std::string b = std::to_string(s.step) + "ll";
      line(depth, "const long long " + bound + " = " + scalar(*s.hi, depth) + ";");
      line(depth, "for (long long " + n + "_start = " + lo + "; " + n + "_start < " + bound + "; " + n + "_start += " + b + ") {");
      line(depth + 1, "const long long " + n + "_extent = " + bound + " - " + n + "_start < " + b + " ? " + bound + " - " + n +
                          "_start : " + b + ";");
      stmts(s.body, depth + 1);
      line(depth, "}");
      return;
    }
    case StmtKind::If: {
      const std::string c = scalar(*s.value, depth);
      line(depth, "if (" + c + ") {");
      stmts(s.body, depth + 1);
      if (!s.else_body.empty()) {
        line(depth, "} else {");
        stmts(s.else_body, depth + 1);
      }
      line(depth, "}");
      return;
    }
    case StmtKind::Role: return;  // handled by run()
  }
}

bool GpuKernelPrinter::assigned(const std::vector<StmtPtr>& body, int var) {
  bool found = false;
  walk(body, [&](const Stmt& st) { found = found || (st.kind == StmtKind::Assign && st.var == var); }, [](const Value&) {});
  return found;
}

// An integer add/sub whose old values nobody reads, with an order `red` can take:
// it becomes a one-way reduction (no round trip per element).
bool GpuKernelPrinter::discarded_add(const Value& v) {
  return v.kind == ValueKind::Atomic && (v.atomic_op == AtomicOp::add || v.atomic_op == AtomicOp::sub) &&
         is_integer(v.type.elem) && (v.order == Order::relaxed || v.order == Order::release);
}

void GpuKernelPrinter::red_add(const Value& v, int depth) {
  const std::string order = order_name(v.order), scope = scope_name(v.scope);
  const std::string neg = v.atomic_op == AtomicOp::sub ? "(" + std::string(type_name(v.type.elem)) + ")0 - " : "";
  const std::string rank = rank_or_self(v.rank, depth);
  if (!v.type.is_tile()) {
    const std::string x = scalar(*v.operands[0], depth);
    line(depth, sync() + ";");
    line(depth, "if (" + leader() + ") iris::device::red_add<" + order + ", " + scope + ">(ctx, " +
                    view_ptr_local(v.view, depth) + ", " + neg + x + ", " + rank + ");");
    return;
  }
  const std::string L = layout_of(v.type);
  const std::string x = slot(*v.operands[0], depth);
  const std::string ptr = fresh("p"), valid = fresh("n"), to = fresh("to");
  line(depth, type_name(k_.params[static_cast<std::size_t>(v.view.param)].elem) + std::string("* ") + ptr + " = " +
                  view_ptr_local(v.view, depth) + ";");
  line(depth, "const long long " + valid + " = " + scalar(*v.view.extent, depth) + ";");
  line(depth, "const int " + to + " = " + rank + ";");
  line(depth, "#pragma unroll");
  line(depth, "for (int s = 0; s < " + L + "::kPerThread; ++s) {");
  line(depth + 1, "if (" + L + "::elem(s) < " + valid + ") iris::device::red_add<" + order + ", " + scope + ">(ctx, " +
                      ptr + " + " + L + "::elem(s), " + neg + x + ", " + to + ");");
  line(depth, "}");
}

// A 2-D tile atomic_add or atomic_sub (sema allows them as statements only, relaxed or
// release): a one-way reduction per element into rank `to`'s tensor, through a pointer
// translated once. In the GEMM epilogue, as epilogue_store does, the value is computed
// slot by slot where it is used, and each pair of slots (neighbouring columns of a row
// in the accumulator layout) goes out as one vector reduction where aligned (f32).
void GpuKernelPrinter::tile_red_add(const Value& v, int depth) {
  const std::string os = "<" + order_name(v.order) + ", " + scope_name(v.scope) + ">";
  const bool negate = v.atomic_op == AtomicOp::sub;
  if (in_epilogue_) {
    epilogue_pairs(v.view, v.rank, *v.operands[0], negate, true, depth, [&](const std::string& cols, const std::string& pairs, int d) {
      line(d, "if (iris_j + 1 < " + cols + ") {");
      line(d + 1, "iris::device::red_add_pair" + os + "(iris_q, iris_v0, iris_v1, " + pairs + ");");
      line(d, "} else {");
      line(d + 1, "iris::device::red_add_at" + os + "(iris_q, iris_v0);");
      line(d, "}");
    });
    return;
  }
  const std::string T = type_name(k_.params[static_cast<std::size_t>(v.view.param)].elem);
  const std::string L = layout2d(v.view.rows, v.view.size);
  line(depth, "{");
  const std::string x0 = slot(*v.operands[0], depth + 1);
  const std::string x = negate ? "(" + T + ")0 - (" + x0 + ")" : x0;
  const std::string p = fresh("p");
  line(depth + 1, T + "* const " + p + " = " + view_ptr(v.view, v.rank, depth + 1) + ";");
  line(depth + 1, "#pragma unroll");
  line(depth + 1, "for (int s = 0; s < " + L + "::kPerThread; ++s) {");
  line(depth + 2, "const int iris_i = " + L + "::row(s), iris_j = " + L + "::col(s);");
  line(depth + 2, "if (iris_i < " + scalar(*v.view.row_extent, depth + 2) + " && iris_j < " + scalar(*v.view.extent, depth + 2) +
                      ") iris::device::red_add_at" + os + "(" + p + " + iris_i * " + scalar(*v.view.ld, depth + 2) +
                      " + iris_j, " + x + ");");
  line(depth + 1, "}");
  line(depth, "}");
}

}  // namespace irisc
