// A host-backend program's statements (program.hpp), roles included.
#include "backend/host/program.hpp"

#include "backend/host/host_job.hpp"

namespace iris::host::interp {

Program::Program(Launch& l, i64 program, i64 programs) : l_(l), k_(l.k), program_(program), programs_(programs) {
  vars_.resize(k_.vars.size());
}

void Program::run() {
  if (k_.roles.empty()) {
    stmts(k_.body);
    return;
  }
  // Statements outside roles run in every program; each role owns a block range.
  const i64 block = program_, grid = programs_;
  i64 first = 0;
  for (const tir::StmtPtr& s : k_.body) {
    if (s->kind != tir::StmtKind::Role) {
      stmt(*s);
      continue;
    }
    const i64 n = sc(*k_.roles[static_cast<std::size_t>(s->role)].programs).i;
    if (block >= first && block < first + n) {
      program_ = block - first;
      programs_ = n;
      stmts(s->body);
      program_ = block;
      programs_ = grid;
    }
    first += n;
  }
}

void Program::stmts(const std::vector<tir::StmtPtr>& body) {
  for (const tir::StmtPtr& s : body) stmt(*s);
}

void Program::assign(int var, const tir::Value& v) {
  VarV& x = vars_[static_cast<std::size_t>(var)];
  const tir::Type& t = k_.vars[static_cast<std::size_t>(var)].type;
  if (t.is_tile()) {
    std::vector<S> tmp;
    if (v.type.is_tile()) tl(v, tmp);
    else tmp.assign(static_cast<std::size_t>(t.elements()), sc(v));  // a scalar fills the tile
    x.t = std::move(tmp);
  } else if (t.kind == tir::TypeKind::Range) {
    x.r = rg(v);
  } else {
    x.s = sc(v);
  }
}

std::vector<S> Program::source(const tir::Value& v, std::size_t n, ScalarType to) {
  std::vector<S> t;
  if (v.type.is_tile()) tl(v, t);
  else t.assign(n, sc(v));
  for (S& s : t) s = cast(to, v.type.elem, s);
  return t;
}

void Program::after_wait() {
  if (l_.failed.load(std::memory_order_relaxed)) throw Stopped{};
  if (l_.ctx.control && std::atomic_ref<unsigned>(l_.ctx.control->abort).load(std::memory_order_relaxed)) throw Stopped{};
}

std::uint64_t Program::flag_word(ScalarType t, S x, std::uint64_t flag) const {
  std::uint32_t bits = 0;
  write(t, &bits, x);  // the value's bytes in the low half, little-endian as on the GPU
  return (flag << 32) | bits;
}

S Program::flagged_value(const tir::Value& v, const char* words, i64 e, std::uint64_t flag, const std::string& where) {
  const bool pairs = elem_bytes(v.type.elem) == 2;  // two values a word: value e is half e % 2 of word e / 2
  const char* p = words + (pairs ? e / 2 : e) * 8;
  const std::uint64_t want = flag << 32;
  // Flags only grow in a correct program (a word holds this call's flag or an older
  // one), so waiting for >= is waiting for ==; a later flag is this program's bug.
  Flag f{p, 8, false, param(v.view.param).name.c_str(), e};
  const std::uint64_t w = wait(l_.ctx, f, device::Cmp::ge, want, device::WaitSite{where.c_str(), -1, 0},
                               static_cast<int>(program_), &l_.failed);
  after_wait();
  if ((w >> 32) != (flag & 0xffffffffu)) {
    fail(v.range, "a flagged load waited for flag " + std::to_string(flag & 0xffffffffu) + " and found a word of flag " +
                      std::to_string(w >> 32) + " (element " + std::to_string(e) + " of " + param(v.view.param).name +
                      "): a later call wrote it before this one read it");
  }
  const std::uint32_t bits = static_cast<std::uint32_t>(w) >> (pairs && e % 2 ? 16 : 0);
  return read(v.type.elem, &bits);
}

void Program::stmt(const tir::Stmt& s) {
  using K = tir::StmtKind;
  switch (s.kind) {
    case K::Let:
    case K::Assign: assign(s.var, *s.value); return;
    case K::Store: {
      const ScalarType t = elem_of(s.view.param);
      const int eb = elem_bytes(t);
      if (s.view.rows) {
        const std::vector<S> x = source(*s.value, static_cast<std::size_t>(s.view.rows * s.view.size), t);
        const View2 w = view2(s.view, s.range, "a store to");
        char* b = base(s.view.param, s.rank, s.range);
        for (i64 i = 0; i < w.rows; ++i) {
          track_range(s.view.param, b, w.offset + i * w.ld, w.cols, true, s.range);
          for (i64 j = 0; j < w.cols; ++j) write(t, b + (w.offset + i * w.ld + j) * eb, x[static_cast<std::size_t>(i * s.view.size + j)]);
        }
        return;
      }
      if (s.view.size) {
        const std::vector<S> x = source(*s.value, static_cast<std::size_t>(s.view.size), t);
        const View1 w = view1(s.view, s.range, "a store to");
        track_range(s.view.param, base(s.view.param, s.rank, s.range), w.offset, w.n, true, s.range);
        char* b = base(s.view.param, s.rank, s.range) + w.offset * eb;
        for (i64 e = 0; e < w.n; ++e) write(t, b + e * eb, x[static_cast<std::size_t>(e)]);
        return;
      }
      const S x = cast(t, s.value->type.elem, sc(*s.value));
      const View1 w = view1(s.view, s.range, "a store to");
      track(s.view.param, base(s.view.param, s.rank, s.range), w.offset, true, s.range);
      write(t, base(s.view.param, s.rank, s.range) + w.offset * eb, x);
      return;
    }
    case K::StoreFlagged: {
      const std::uint64_t flag = static_cast<std::uint64_t>(sc(*s.flag).i) & 0xffffffffu;
      const ScalarType t = s.value->type.elem;
      const View1 w = words1(s.view, t, s.range, "a flagged store to");
      char* b = base(s.view.param, s.rank, s.range) + w.offset * 8;
      const auto put_word = [&](i64 k, std::uint64_t word) {
        if (races::enabled()) track_as(s.view.param, b + k * 8, w.offset + k, races::Access::atomic_write, s.range);
        store_bits<std::uint64_t>(b + k * 8, word);
      };
      const auto put = [&](i64 e, S x) { put_word(e, flag_word(t, x, flag)); };
      if (s.view.size) {
        const std::vector<S> x = source(*s.value, static_cast<std::size_t>(s.view.size), t);
        if (elem_bytes(t) == 2) {
          // Two values a word, the first in the low 16 bits; a last odd one beside 0.
          for (i64 e = 0; e < w.n; e += 2) {
            const std::uint64_t lo = flag_word(t, x[static_cast<std::size_t>(e)], flag) & 0xffffu;
            const std::uint64_t hi = e + 1 < w.n ? flag_word(t, x[static_cast<std::size_t>(e + 1)], flag) & 0xffffu : 0;
            put_word(e / 2, (flag << 32) | (hi << 16) | lo);
          }
        } else {
          for (i64 e = 0; e < w.n; ++e) put(e, x[static_cast<std::size_t>(e)]);
        }
      } else {
        put(0, sc(*s.value));
      }
      return;
    }
    case K::Send: {
      // Each value's bits, never all set (that reads as an empty slot): a value with
      // every bit set goes with its sign bit clear, as the GPU's send writes it.
      const ScalarType t = elem_of(s.view.param);
      const int eb = elem_bytes(t);
      const std::vector<S> x = source(*s.value, static_cast<std::size_t>(s.view.size), t);
      const View1 w = view1(s.view, s.range, "a send to");
      char* b = base(s.view.param, s.rank, s.range) + w.offset * eb;
      for (i64 e = 0; e < w.n; ++e) {
        if (races::enabled()) track_as(s.view.param, b + e * eb, w.offset + e, races::Access::atomic_write, s.range);
        std::uint32_t bits = 0;
        write(t, &bits, x[static_cast<std::size_t>(e)]);
        const std::uint32_t all = eb == 2 ? 0xffffu : 0xffffffffu;
        if (bits == all) bits >>= 1;
        if (eb == 2) store_bits<std::uint16_t>(b + e * eb, static_cast<std::uint16_t>(bits));
        else store_bits<std::uint32_t>(b + e * eb, bits);
      }
      return;
    }
    case K::Signal: {
      const ScalarType t = elem_of(s.view.param);
      const S x = cast(t, s.value->type.elem, sc(*s.value));
      const View1 w = view1(s.view, s.range, "a signal of");
      char* p = base(s.view.param, s.rank, s.range) + w.offset * elem_bytes(t);
      const std::memory_order mo = memory_order(s.order);
      // A signal releases unless it is relaxed (its default order is release).
      const tir::Order order = s.order == tir::Order::relaxed ? tir::Order::relaxed : tir::Order::release;
      atomically(s.view.param, p, w.offset, order, s.scope, s.range, [&] {
        if (s.signal_op == tir::SignalOp::add) {
          atomic(t, p, tir::AtomicOp::add, s.order, x, S{});
        } else if (elem_bytes(t) == 8) {
          store_bits<u64>(p, static_cast<u64>(x.i), store_order(mo));
        } else if (elem_bytes(t) == 4) {
          store_bits<std::uint32_t>(p, static_cast<std::uint32_t>(x.i), store_order(mo));
        } else {
          std::atomic_thread_fence(std::memory_order_seq_cst);
          write(t, p, x);
        }
        return 0;
      });
      return;
    }
    case K::Fence:
      // The program's threads are one here: the barrier is implicit, the fence is the
      // host's.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      fenced_ = fenced_ ? std::max(*fenced_, s.scope) : s.scope;
      return;
    case K::Wait: {
      const ScalarType t = elem_of(s.view.param);
      const S x = cast(t, s.value->type.elem, sc(*s.value));
      const View1 w = view1(s.view, s.range, "a wait on");
      const char* p = base(s.view.param, nullptr, s.range) + w.offset * elem_bytes(t);
      if (elem_bytes(t) != 4 && elem_bytes(t) != 8) fail(s.range, "a wait on a flag that is not 32 or 64 bits");
      Flag f{p, elem_bytes(t), t == ScalarType::i32 || t == ScalarType::i64, param(s.view.param).name.c_str(), w.offset};
      const std::string where = site(s.range);
      wait(l_.ctx, f, static_cast<device::Cmp>(s.cmp), static_cast<u64>(x.i), device::WaitSite{where.c_str(), -1, 0},
           static_cast<int>(program_), &l_.failed);
      after_wait();
      if (races::enabled()) {
        if (s.order != tir::Order::relaxed) races::acquire(l_.ctx, p, s.scope == tir::Scope::system);
        track_as(s.view.param, p, w.offset, races::Access::atomic_read, s.range);
      }
      return;
    }
    case K::Eval: {
      if (s.value->type.is_tile()) {
        std::vector<S> t;
        tl(*s.value, t);
      } else {
        (void)sc(*s.value);
      }
      return;
    }
    case K::ForBlocks: {
      const i64 bound = sc(*s.hi).i;
      VarV& v = vars_[static_cast<std::size_t>(s.var)];
      for (i64 start = program_ * s.step; start < bound; start += programs_ * s.step) {
        v.r = {start, bound - start < s.step ? bound - start : s.step};
        after_wait();  // a loop, however long, stops when the job aborts
        stmts(s.body);
      }
      return;
    }
    case K::ForTiles: {
      const i64 rows = sc(*s.hi).i, cols = sc(*s.hi2).i;
      const i64 across = (cols + s.step2 - 1) / s.step2;
      const i64 down = (rows + s.step - 1) / s.step, total = down * across;
      // from_row: the walk starts at the tile row holding that row (modulo rows) and wraps.
      i64 shift = 0;
      if (s.lo && rows > 0) shift = (sc(*s.lo).i % rows + rows) % rows / s.step;
      for (i64 t = program_; t < total; t += programs_) {
        VarV& m = vars_[static_cast<std::size_t>(s.var)];
        m.r.start = (t / across + shift) % down * s.step;
        m.r.extent = rows - m.r.start < s.step ? rows - m.r.start : s.step;
        VarV& n = vars_[static_cast<std::size_t>(s.var2)];
        n.r.start = t % across * s.step2;
        n.r.extent = cols - n.r.start < s.step2 ? cols - n.r.start : s.step2;
        if (s.var_t >= 0) vars_[static_cast<std::size_t>(s.var_t)].s = S{m.r.start / s.step * across + t % across, 0};
        after_wait();  // a loop, however long, stops when the job aborts
        stmts(s.body);
      }
      return;
    }
    case K::ForRanks: {
      const int world = l_.ctx.world;
      for (int k = s.peers_only ? 1 : 0; k < world; ++k) {
        vars_[static_cast<std::size_t>(s.var)].s = S{s.peers_only ? (l_.ctx.rank + k) % world : k, 0};
        stmts(s.body);
      }
      return;
    }
    case K::ForRange: {
      const i64 lo = sc(*s.lo).i, hi = sc(*s.hi).i;
      const i64 step = s.stride ? sc(*s.stride).i : 1;  // not positive: no iterations, as on the GPU
      for (i64 i = lo; step > 0 && i < hi; i += step) {
        vars_[static_cast<std::size_t>(s.var)].s = S{i, 0};
        after_wait();  // a loop, however long, stops when the job aborts
        stmts(s.body);
      }
      return;
    }
    case K::ForChunks: {
      const i64 lo = sc(*s.lo).i, bound = sc(*s.hi).i;
      VarV& v = vars_[static_cast<std::size_t>(s.var)];
      for (i64 start = lo; start < bound; start += s.step) {
        v.r = {start, bound - start < s.step ? bound - start : s.step};
        after_wait();  // a loop, however long, stops when the job aborts
        stmts(s.body);
      }
      return;
    }
    case K::If: {
      if (sc(*s.value).i) stmts(s.body);
      else stmts(s.else_body);
      return;
    }
    case K::Role: return;  // run() splits the grid
  }
}

}  // namespace iris::host::interp
