// The GPU kernel printer's waits and signals: the calls of one, and loops over ranks of
// one wait or one signal printed so that each thread takes some of the ranks.
#include "compiler/codegen/gpu_kernel_printer.hpp"

#include <algorithm>

namespace irisc {

using namespace tir;

// The call of a wait or a signal on flag pointer `p` with value `x` (and rank `to`),
// evaluated by the caller in every thread before any branch on the thread.
std::string GpuKernelPrinter::wait_call(const Stmt& s, const std::string& p, const std::string& x) const {
  return "iris::device::wait_until<" + order_name(s.order) + ", " + scope_name(s.scope) + ">(ctx, " + p +
         ", iris::device::Cmp::" + name(s.cmp) + ", " + x + ", iris::device::WaitSite{" + site_literal(s) + "})";
}

std::string GpuKernelPrinter::signal_call(const Stmt& s, const std::string& p, const std::string& x,
                                          const std::string& to) const {
  return "iris::device::signal<" + order_name(s.order) + ", " + scope_name(s.scope) + ">(ctx, " + p + ", " + x +
         ", " + to + ", iris::device::SignalOp::" + (s.signal_op == SignalOp::add ? "add" : "set") + ")";
}

namespace {
// A scalar that prints as an expression alone (no statements: no reduction, load or
// atomic), so that threads may evaluate it in iterations of their own.
bool plain_scalar(const Value& v) {
  switch (v.kind) {
    case ValueKind::Const:
    case ValueKind::ParamRef:
    case ValueKind::SizeRef:
    case ValueKind::BuiltinRef: return true;
    case ValueKind::VarRef: return !v.type.is_tile();
    case ValueKind::Unary:
    case ValueKind::Binary:
    case ValueKind::Cast:
    case ValueKind::Select:
      return std::all_of(v.operands.begin(), v.operands.end(), [](const ValuePtr& o) { return plain_scalar(*o); });
    default: return false;
  }
}
}  // namespace

// `for r in ranks { wait(f[r] >= e); }` waited for rank 0's flag, then rank 1's, ...: a
// round trip to memory each even when every flag is long set. Here thread t waits for
// the flags of iterations t, t + threads, ..., then the barrier (as after one wait) lets
// no thread on before all are seen. A loop of one signal: the barrier every signal has,
// once, then each thread stores its iterations' flags (a release by each thread after
// the barrier publishes every thread's earlier writes, as thread 0's does).
bool GpuKernelPrinter::flag_loop_in_parallel(const Stmt& loop, int depth) {
  if (in_prologue_ || in_epilogue_ || trace_events_ || loop.body.size() != 1) return false;
  const Stmt& body = *loop.body.front();
  if (body.kind != StmtKind::Wait && body.kind != StmtKind::Signal) return false;
  if (loop.kind == StmtKind::ForRange && loop.stride) return false;
  // Threads run different iterations: what the body evaluates must print no statements.
  if (!plain_scalar(*body.value) || !plain_scalar(*body.view.offset) || (body.rank && !plain_scalar(*body.rank))) {
    return false;
  }
  const std::string n = var_name(loop.var), t = thread_index(), threads = std::to_string(threads_);
  if (body.kind == StmtKind::Signal) line(depth, sync() + ";");
  if (loop.kind == StmtKind::ForRanks) {
    if (loop.peers_only) {
      line(depth, "for (long long iris_k = 1 + " + t + "; iris_k < ctx.world; iris_k += " + threads + ") {");
      line(depth + 1, "const long long " + n + " = iris_rem(ctx.rank + iris_k, (long long)ctx.world);");
    } else {
      line(depth, "for (long long " + n + " = " + t + "; " + n + " < ctx.world; " + n + " += " + threads + ") {");
    }
  } else {
    const std::string lo = scalar(*loop.lo, depth), hi = scalar(*loop.hi, depth);
    const std::string bound = fresh("hi");
    line(depth, "const long long " + bound + " = " + hi + ";");
    line(depth, "for (long long " + n + " = " + lo + " + " + t + "; " + n + " < " + bound + "; " + n + " += " + threads +
                    ") {");
  }
  const std::string p = view_ptr_local(body.view, depth + 1), x = scalar(*body.value, depth + 1);
  line(depth + 1, (body.kind == StmtKind::Wait ? wait_call(body, p, x)
                                               : signal_call(body, p, x, rank_or_self(body.rank, depth + 1))) +
                      ";");
  line(depth, "}");
  if (body.kind == StmtKind::Wait) line(depth, sync() + ";");
  return true;
}

}  // namespace irisc
