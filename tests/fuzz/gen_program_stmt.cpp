// The program generator's statements, kernels (parameter lists, roles) and whole programs.
#include <algorithm>

#include "tests/fuzz/gen_program_internal.hpp"

namespace irisc_fuzz::detail {

// ---- statements -------------------------------------------------------------------------
GenNode Gen::leaf(std::string s) {
  GenNode n;
  n.head = std::move(s);
  return n;
}

std::vector<GenNode> Gen::block(int depth, int n) {
  std::vector<GenNode> out;
  scopes_.emplace_back();
  for (int i = 0; i < n && stmts_ < o_.max_stmts; ++i) stmt(out, depth);
  scopes_.pop_back();
  return out;
}

// A block body that is never empty (an empty loop body is legal but tests little).
std::vector<GenNode> Gen::body(int depth) {
  auto b = block(depth, static_cast<int>(between(1, 3)));
  return b;
}

void Gen::stmt(std::vector<GenNode>& out, int depth) {
  std::vector<GenNode>* saved = pre_;
  pre_ = &out;
  ++stmts_;
  const bool can_nest = depth < o_.max_block_depth && stmts_ < o_.max_stmts - 1;
  const bool has_sym = !tensors_where([](const Tensor& t) { return t.sym; }).empty();
  const bool has_int = !tensors_where([](const Tensor& t) { return isi(t.e); }).empty();
  const bool has_atomic = !tensors_where([](const Tensor& t) { return atomic_ok(t.e); }).empty();
  const bool has_mut = !visible([](const Var& v) { return v.mut && v.ty.k != K::Range; }).empty();
  const bool can_send = has_slots() && !shapes_1d().empty();
  std::vector<int> w = {
      14,                            // 0 let
      has_mut ? 8 : 0,               // 1 assign
      18,                            // 2 store
      has_sym ? 3 : 0,               // 3 get
      has_atomic ? 6 : 0,            // 4 atomic
      has_int ? 4 : 0,               // 5 signal
      has_int ? 3 : 0,               // 6 wait
      can_nest ? (has_slots() && !can_send ? 24 : 10) : 0,  // 7 blocks (ranges for slots)
      can_nest ? (gemms_.empty() ? 3 : 9) : 0,  // 8 tiles
      can_nest && world_depth_ < world_cap_ ? 4 : 0,  // 9 ranks / peers
      can_nest ? 4 : 0,              // 10 range
      can_nest ? 6 : 0,              // 11 if
      2,                             // 12 a value call as a statement
      1,                             // 13 reassigned range let
      can_send ? 16 : 0,             // 14 send into slots
      has_words() ? 5 : 0,           // 15 data-and-flag store
  };
  switch (pickw(w)) {
    case 0: stmt_let(out); break;
    case 1: stmt_assign(out); break;
    case 2: stmt_store(out); break;
    case 3: stmt_get(out); break;
    case 4: out.push_back(leaf(atomic_stmt() + ";")); break;
    case 5: stmt_signal(out); break;
    case 6: stmt_wait(out); break;
    case 7: stmt_blocks(out, depth); break;
    case 8: stmt_tiles(out, depth); break;
    case 9: stmt_ranks(out, depth); break;
    case 10: stmt_range(out, depth); break;
    case 11: stmt_if(out, depth); break;
    case 12: stmt_eval(out); break;
    case 13: stmt_range_let(out); break;
    case 14: stmt_send(out); break;
    case 15: stmt_store_flagged(out); break;
  }
  pre_ = saved;
}

void Gen::stmt_let(std::vector<GenNode>& out) {
  const std::string n = user_name("v");
  Ex x;
  const int k = static_cast<int>(u(10));
  if (k < 5) x = value({}, rand_scalar_elem(), edepth());
  else if (k < 9) x = value(pick_tile_shape(true), rand_scalar_elem(), edepth());
  else if (!range_sizes().empty()) x = range_any();
  else x = value({}, rand_scalar_elem(), edepth());
  out.push_back(leaf("let " + n + " = " + x.t + ";"));
  declare(n, x.ty, true);
}

void Gen::stmt_range_let(std::vector<GenNode>& out) {
  // `let j = n; j = n2;` (a range let reassigned) and `let j = n;` used in a view.
  if (range_sizes().empty()) return stmt_let(out);
  const std::string n = user_name("v");
  Ex r = range_any();
  out.push_back(leaf("let " + n + " = " + r.t + ";"));
  declare(n, r.ty, true);
  if (p_(0.5)) {
    auto other = range_sized(r.ty.sh.size, false);
    out.push_back(leaf(n + " = " + other->t + ";"));
  }
  if (ok1d(r.ty.sh.size) && p_(0.7)) {
    auto ts = tensors_where([](const Tensor&) { return true; });
    const Tensor& t = tensors_[static_cast<std::size_t>(pick(ts))];
    std::string view = t.dims == 1 ? t.name + "[" + n + "]" : t.name + "[" + ipos(0).t + ", " + n + "]";
    out.push_back(leaf("store(" + view + ", " + value(r.ty.sh, t.e, 1).t + ");"));
  }
}

void Gen::stmt_assign(std::vector<GenNode>& out) {
  auto vs = visible([](const Var& v) { return v.mut && v.ty.k != K::Range; });
  const Var v = pick(vs);
  const E e = v.ty.e;
  if (e == E::b) {
    out.push_back(leaf(v.name + " = " + boolean(p_(0.7) ? v.ty.sh : Shape{}, edepth()).t + ";"));
    return;
  }
  static const char* ops[] = {"=", "+=", "-=", "*=", "/="};
  const std::string op = ops[pickw({4, 3, 2, 2, 1})];
  Ex x = p_(0.6) ? value(v.ty.sh, e, edepth()) : operand(v.ty.sh, e, edepth(), true);
  if (op == "/=" && x.lit && !isf(x.ty.e) && x.kv == 0) x = lit_int(3);
  if (!coerce_ok(x, e)) x = exact(x, e);
  out.push_back(leaf(v.name + " " + op + " " + x.t + ";"));
}

// A view of some tensor with a shape that works here, and the shape.
std::pair<std::string, Shape> Gen::any_view(const Tensor& t) {
  std::vector<Shape> shapes = {{}};
  for (const Shape& s : shapes_1d()) shapes.push_back(s), shapes.push_back(s);
  if (t.dims == 2) {
    for (const Shape& s : shapes_2d()) shapes.push_back(s), shapes.push_back(s);
  }
  const Shape sh = pick(shapes);
  if (sh.scalar()) return {elem_view(t), sh};
  return {*tile_view(t, sh), sh};
}

void Gen::stmt_store(std::vector<GenNode>& out) {
  const Tensor& t = pick(tensors_);
  auto [view, sh] = any_view(t);
  Ex x = p_(0.75) ? value(sh, t.e, edepth()) : operand(sh, t.e, edepth(), true);
  if (!coerce_ok(x, t.e) || (!x.lit && x.ty.e != t.e && !(x.ty.e == E::int_ && isi(t.e)))) x = exact(x, t.e);
  std::string s = std::string(p_(0.85) ? "store(" : "put(") + view + ", " + x.t;
  if (t.sym && p_(0.55)) s += ", to: " + ipos(1).t;
  out.push_back(leaf(s + ");"));
}

void Gen::stmt_get(std::vector<GenNode>& out) {
  const Tensor& src = tensors_[static_cast<std::size_t>(pick(tensors_where([](const Tensor& t) { return t.sym; })))];
  auto dsts = tensors_where([&](const Tensor& t) { return t.e == src.e; });
  const Tensor& dst = tensors_[static_cast<std::size_t>(pick(dsts))];
  // Both views of one shape: an element, a 1-D tile or (both 2-D) a 2-D tile.
  std::vector<Shape> shapes = {{}};
  for (const Shape& s : shapes_1d()) shapes.push_back(s), shapes.push_back(s);
  if (src.dims == 2 && dst.dims == 2) {
    for (const Shape& s : shapes_2d()) shapes.push_back(s);
  }
  const Shape sh = pick(shapes);
  const std::string dv = sh.scalar() ? elem_view(dst) : *tile_view(dst, sh);
  const std::string sv = sh.scalar() ? elem_view(src) : *tile_view(src, sh);
  std::string s = "get(" + dv + ", " + sv;
  if (p_(0.85)) s += ", from: " + ipos(1).t;
  out.push_back(leaf(s + ");"));
}

std::string Gen::atomic_stmt() {
  auto at = tensors_where([](const Tensor& t) { return atomic_ok(t.e); });
  const Tensor& t = tensors_[static_cast<std::size_t>(pick(at))];
  Shape sh;
  auto rs = shapes_1d();
  if (!rs.empty() && p_(0.6)) sh = pick(rs);
  return atomic_call(t, sh, edepth());
}

const Tensor& Gen::int_tensor() {
  return tensors_[static_cast<std::size_t>(pick(tensors_where([](const Tensor& t) { return isi(t.e); })))];
}

Ex Gen::flag_value(const Tensor& f) {
  const int k = static_cast<int>(u(4));
  if (k == 0) return lit_int(between(0, 3));
  if (k == 1) return exact(ipos(1, false), f.e);
  if (k == 2) return int_leaf();
  return value({}, f.e, 1);
}

void Gen::stmt_signal(std::vector<GenNode>& out) {
  const Tensor& f = int_tensor();
  std::string s = "signal(" + elem_view(f) + ", " + flag_value(f).t;
  std::vector<std::string> named;
  if (f.sym && p_(0.7)) named.push_back("to: " + ipos(1).t);
  if (p_(0.5)) named.push_back(std::string("op: ") + (p_(0.5) ? "add" : "set"));
  if (p_(0.4)) named.push_back(std::string("order: ") + (p_(0.5) ? "relaxed" : "release"));
  if (p_(0.4)) named.push_back(std::string("scope: ") + pick(std::vector<std::string>{"block", "device", "system"}));
  out.push_back(leaf(s + named_args(named) + ");"));
}

void Gen::stmt_wait(std::vector<GenNode>& out) {
  const Tensor& f = int_tensor();
  static const char* cmps[] = {"==", "!=", ">", ">=", "<", "<="};
  std::string s = "wait(" + elem_view(f) + " " + cmps[u(6)] + " " + flag_value(f).t;
  std::vector<std::string> named;
  if (p_(0.4)) named.push_back(std::string("order: ") + (p_(0.5) ? "relaxed" : "acquire"));
  if (p_(0.4)) named.push_back(std::string("scope: ") + pick(std::vector<std::string>{"block", "device", "system"}));
  out.push_back(leaf(s + named_args(named) + ");"));
}

GenNode Gen::loop_node(std::string head, int depth, std::vector<Var> vars) {
  GenNode n;
  n.head = std::move(head);
  n.is_block = true;
  scopes_.emplace_back();
  for (const Var& v : vars) scopes_.back().push_back(v);
  n.body = body(depth + 1);
  scopes_.pop_back();
  return n;
}

void Gen::stmt_blocks(std::vector<GenNode>& out, int depth) {
  static const std::int64_t bs[] = {32, 64, 128, 256, 512, 1024, 2048, 4096, 16384};
  static const int bw[] = {60, 80, 80, 80, 50, 40, 8, 8, 3};
  std::vector<int> ws;
  for (std::size_t i = 0; i < std::size(bs); ++i) ws.push_back(ok1d(bs[i]) ? bw[i] : 0);
  const std::int64_t b = bs[pickw(ws)];
  const std::string i = user_name("i");
  const Ex hi = bound(1);
  std::string head = "for " + i + " in blocks(" + hi.t + ", " + const_text(b) + ")";
  if (p_(0.15)) head += " persistent";
  out.push_back(loop_node(head, depth, {{i, Ty::range(b), false, false}}));
}

void Gen::stmt_tiles(std::vector<GenNode>& out, int depth) {
  static const std::int64_t ss[] = {16, 32, 64, 128, 256};
  std::int64_t s0 = ss[pickw({2, 6, 6, 3, 1})], s1 = ss[pickw({2, 6, 6, 3, 1})];
  while (!ok2d(s0, s1)) (p_(0.5) ? s0 : s1) /= 2;
  if (s0 < 16) s0 = 16;
  if (s1 < 16) s1 = 16;
  const std::string m = user_name("m"), n = user_name("n");
  const bool with_t = p_(0.25);
  const std::string t = with_t ? user_name("t") : "";
  const Ex b0 = bound(1), b1 = bound(1);  // a let used only as a tiles bound: `let cols = N;`
  std::string head = "for " + (with_t ? t + ", " : std::string()) + "(" + m + ", " + n + ") in tiles([" + b0.t +
                     ", " + b1.t + "], [" + const_text(s0) + ", " + const_text(s1) + "])";
  if (p_(0.15)) head += " persistent";
  std::vector<Var> vars = {{m, Ty::range(s0), false, false}, {n, Ty::range(s1), false, false}};
  if (with_t) vars.push_back({t, Ty::scalar(E::int_), false, false});
  GenNode node;
  node.head = head;
  node.is_block = true;
  scopes_.emplace_back();
  for (const Var& v : vars) scopes_.back().push_back(v);
  // The GEMM shape: a product of this tile, stored somewhere 2-D.
  if (can_matmul() && p_(0.7)) {
    std::vector<GenNode>* saved = pre_;
    pre_ = &node.body;
    ++stmts_;
    const Shape sh{s1, s0};
    const E acc = pick(std::vector<E>{E::f32, E::f32, E::f32, E::f16, E::bf16});
    Ex c = matmul(sh, acc);
    // Into a 2-D tensor (the A and B operands at least are): a bool one takes `c > 0`.
    auto outs = tensors_where([](const Tensor& x) { return x.dims == 2; });
    const Tensor& dst = tensors_[static_cast<std::size_t>(pick(outs))];
    if (dst.e == E::b) c = Ex{"(" + c.t + " > 0.0)", Ty::tile(E::b, sh)};
    if (p_(0.5)) {
      const std::string cn = user_name("c");
      node.body.push_back(leaf("let " + cn + " = " + exact(c, dst.e).t + ";"));
      scopes_.back().push_back({cn, Ty::tile(dst.e, sh), true, false});
      c = Ex{cn, Ty::tile(dst.e, sh)};
    } else {
      c = exact(c, dst.e);
    }
    std::string s = "store(" + *tile_view(dst, sh) + ", " + c.t;
    if (dst.sym && p_(0.5)) s += ", to: " + ipos(1).t;
    node.body.push_back(leaf(s + ");"));
    pre_ = saved;
  }
  auto more = block(depth + 1, static_cast<int>(between(node.body.empty() ? 1 : 0, 2)));
  for (auto& x : more) node.body.push_back(std::move(x));
  scopes_.pop_back();
  out.push_back(std::move(node));
}

void Gen::stmt_ranks(std::vector<GenNode>& out, int depth) {
  const std::string r = user_name("r");
  ++world_depth_;
  out.push_back(loop_node("for " + r + " in " + (p_(0.5) ? "ranks" : "peers"), depth, {{r, Ty::scalar(E::int_), false, false}}));
  --world_depth_;
}

void Gen::stmt_range(std::vector<GenNode>& out, int depth) {
  const std::string k = user_name("k");
  std::string head;
  if (world_depth_ >= world_cap_) {
    // No world in the bounds' expressions (a let holding it is fine: not unrolled).
    auto b = [&] {
      const int f = static_cast<int>(u(3));
      if (f == 0) return lit_int(between(0, 40)).t;
      if (f == 1 && !sizes_.empty()) return pick(sizes_);
      return hoist(ipos(1, false)).t;
    };
    head = p_(0.5) ? "range(" + b() + ")" : "range(" + b() + ", " + b() + ")";
  } else {
    const int form = static_cast<int>(u(4));
    if (form == 0) head = "range(" + lit_int(between(0, 2)).t + ", " + ipos(1, true, 0.35).t + ")";
    else if (form == 1) head = "range(" + ipos(1, true, 0.35).t + ")";
    else if (form == 2) head = "range(1, world + 1)";
    else head = "range(" + ipos(0).t + ", " + bound(0).t + ")";
  }
  const bool w = head.find("world") != std::string::npos;
  world_depth_ += w;
  out.push_back(loop_node("for " + k + " in " + head, depth, {{k, Ty::scalar(E::int_), false, false}}));
  world_depth_ -= w;
}

GenNode Gen::if_node(int depth) {
  GenNode n;
  n.head = "if " + boolean({}, edepth()).t;
  n.is_block = true;
  n.body = body(depth + 1);
  if (p_(0.4)) {
    n.has_else = true;
    if (p_(0.3) && depth + 1 < o_.max_block_depth) {
      n.else_is_if = true;
      // Lets hoisted out of the else-if condition go before the whole if.
      scopes_.emplace_back();
      n.else_body.push_back(if_node(depth + 1));
      scopes_.pop_back();
    } else {
      n.else_body = body(depth + 1);
    }
  }
  return n;
}

void Gen::stmt_if(std::vector<GenNode>& out, int depth) { out.push_back(if_node(depth)); }

void Gen::stmt_eval(std::vector<GenNode>& out) {
  const int k = static_cast<int>(u(4));
  if (k == 3 && has_slots() && !shapes_1d().empty()) {
    // A receive as a statement: its value unused, but it still waits and empties the slots.
    const Shape sh = pick(shapes_1d());
    const auto fs = tensors_where([](const Tensor& t) { return isf(t.e); });
    out.push_back(leaf(receive(sh, tensors_[static_cast<std::size_t>(pick(fs))].e).t + ";"));
    return;
  }
  if (k == 0 && !shapes_1d().empty()) {
    auto ts = tensors_where([&](const Tensor&) { return true; });
    const Tensor& t = tensors_[static_cast<std::size_t>(pick(ts))];
    auto [view, sh] = any_view(t);
    out.push_back(leaf("load(" + view + ");"));
    return;
  }
  const E e = rand_num_elem();
  if (k == 1 || k == 3) {
    out.push_back(leaf(std::string(pick(std::vector<std::string>{"sum", "max", "min"})) + "(" +
                       value(pick_tile_shape(true), e, 1).t + ");"));
    return;
  }
  out.push_back(leaf("abs(" + value({}, e == E::b ? E::f32 : e, 1).t + ");"));
}

// ---- kernels -------------------------------------------------------------------------------
std::string Gen::role_programs() {
  std::vector<std::string> c = {"1", "2", "3", "sms", "sms - 1", "sms - 2", "sms - 50", "sms / 2", "sms / 56",
                                "world", "world * 2", "world + 1", "min(sms, 8)", "max(1, world - 1)",
                                "max(world - 1, 1)", "min(4, world)", "sms - world", "(sms - world) / 2",
                                "min(sms - 1, 64)", "2 * 3"};
  for (auto& [n, v] : consts_) {
    if (v >= 1 && v <= 100000) {
      c.push_back(n);
      c.push_back("min(" + n + ", sms)");
      c.push_back("max(" + n + " / 1000, 1)");
    }
  }
  return pick(c);
}

Dim Gen::plain_dim(const std::vector<std::string>& syms) {
  Dim d;
  const int k = static_cast<int>(pickw({45, 10, 8, 8, 16, 5}));
  const std::string s = pick(syms);
  switch (k) {
    case 0: d.text = d.bare = d.sema_text = s; d.syms = {s}; break;
    case 1: {
      const std::int64_t v = pick(std::vector<std::int64_t>{1, 2, 4, 16, 64, 1000, 4096});
      d.text = d.sema_text = std::to_string(v);
      break;
    }
    case 2:
      if (!consts_.empty()) {
        auto& [n, v] = pick(consts_);
        d.text = n;
        d.sema_text = std::to_string(v);
        break;
      }
      [[fallthrough]];
    case 3: d.text = d.sema_text = "world"; break;
    case 4: {
      static const char* fs[] = {"{} * world", "world * {}", "{} * 2", "{} + 8", "{} / 2", "{} - 1", "2 * {} + 1"};
      std::string f = fs[u(std::size(fs))];
      f.replace(f.find("{}"), 2, s);
      d.text = f;
      d.sema_text = "?" + f;  // never matched against another extent
      d.syms = {s};
      break;
    }
    default: d.text = d.sema_text = "world * 2"; break;
  }
  return d;
}

GenKernel Gen::kernel(const std::string& name, std::map<std::string, std::int64_t>& defines) {
  consts_.clear();
  sizes_.clear();
  tensors_.clear();
  scalars_.clear();
  scopes_.clear();
  gemms_.clear();
  names_ = 0;
  stmts_ = 0;
  used_names_.clear();
  tmin_ = pick(std::vector<std::int64_t>{16, 32, 32, 64, 64, 128, 128, 256, 256, 256});
  tmax_ = tmin_ == 256 ? 16384 : 32 * tmin_;
  slots_ = p_(0.45);
  if (slots_) tmax_ = std::min<std::int64_t>(tmax_, 1024);
  world_depth_ = 0;
  world_cap_ = p_(0.85) ? 1 : 2;
  matmuls_ = 0;
  GenKernel k;
  k.name = name;

  // Compile-time parameters.
  std::vector<std::string> cnames = {"B", "BM", "BN", "BK", "C", "D", "U", "W"};
  for (std::size_t i = cnames.size(); i > 1; --i) std::swap(cnames[i - 1], cnames[u(i)]);
  const int nconst = static_cast<int>(pickw({3, 4, 3, 2}));
  for (int i = 0; i < nconst; ++i) {
    const std::string n = cnames[static_cast<std::size_t>(i)];
    static const char* types[] = {"int", "int", "int", "i32", "i64", "u32", "u64"};
    const std::string ty = types[u(std::size(types))];
    std::int64_t v = p_(0.7) ? pick(std::vector<std::int64_t>{32, 64, 64, 128, 256, 512, 1024}) : between(1, 8);
    std::string text = n + ": " + ty;
    int how = static_cast<int>(pickw({70, 12, 10}));
    // A -D applies to every kernel declaring the name: no new -D for a name an
    // earlier kernel declared (it would change that kernel's value too).
    if (!all_consts_.insert(n).second) how = 0;
    if (auto d = defines.find(n); d != defines.end()) {
      v = d->second;  // another kernel's -D applies here too
      text += " = " + std::to_string(between(1, 64));
    } else if (how == 0) {
      text += " = " + const_text(v);
    } else if (how == 1) {
      defines[n] = v;  // no default: given with -D
    } else {
      text += " = " + std::to_string(between(1, 4096));  // overridden with -D
      defines[n] = v;
    }
    k.consts.push_back(text);
    consts_.push_back({n, v});
  }

  // Tensors (and their size symbols), scalars.
  std::vector<std::string> syms = {"N", "M", "K", "L", "P"};
  syms.resize(static_cast<std::size_t>(between(1, 4)));
  std::vector<std::pair<Tensor, std::vector<Dim>>> plan;
  auto add_tensor = [&](E e, bool sym, std::vector<Dim> dims) {
    Tensor t{user_name("x"), e, sym, static_cast<int>(dims.size()), {}};
    plan.push_back({t, std::move(dims)});
    return static_cast<int>(plan.size() - 1);
  };
  const int nt = static_cast<int>(between(2, 5));
  for (int i = 0; i < nt; ++i) {
    std::vector<Dim> dims;
    const int rank = p_(0.4) ? 2 : 1;
    for (int d = 0; d < rank; ++d) dims.push_back(plain_dim(syms));
    add_tensor(rand_tensor_elem(), p_(0.5), std::move(dims));
  }
  if (p_(0.5)) {
    Dim d;
    d.text = d.sema_text = pick(std::vector<std::string>{"1", "world", "4"});
    add_tensor(pick(std::vector<E>{E::u64, E::u32, E::i32, E::i64}), p_(0.8), {d});
  }
  // Slots and data-and-flag words (any float / u64 tensor serves; these make them
  // common, symmetric as sends and stores to other ranks need).
  if (slots_ && p_(0.7)) add_tensor(pick(std::vector<E>{E::f32, E::f32, E::f16, E::bf16}), p_(0.85), msg_dims(syms));
  if (p_(0.3)) add_tensor(E::u64, p_(0.85), msg_dims(syms));
  if (p_(0.4)) {
    // A GEMM: A[X, K] x B[K, Y] with K spelled so that sema sees the same extent.
    const E f = pick(std::vector<E>{E::bf16, E::bf16, E::f16, E::f16, E::f32});
    Dim kd;
    const int kk = static_cast<int>(u(4));
    Dim kd2;
    if (kk == 0 || (kk >= 2 && consts_.empty())) {
      kd.text = kd.bare = kd.sema_text = "K";
      kd.syms = {"K"};
      kd2 = kd;
    } else if (kk == 1) {
      kd.text = kd.sema_text = std::to_string(pick(std::vector<std::int64_t>{16, 32, 64, 100}));
      kd2 = kd;
    } else {
      auto& [n, v] = pick(consts_);
      kd.text = n;
      kd.sema_text = std::to_string(v);
      kd2 = kd;
      if (p_(0.5)) kd2.text = std::to_string(v);
    }
    Dim x = plain_dim(syms), y = plain_dim(syms);
    if (p_(0.5)) x.text = x.bare = x.sema_text = "M", x.syms = {"M"};
    const int a = add_tensor(f, false, {x, kd});
    const int b = add_tensor(f, p_(0.2), {kd2, y});
    gemms_.push_back({a, b});
    if (p_(0.6)) {
      Dim cx = plain_dim(syms), cy = plain_dim(syms);
      add_tensor(pick(std::vector<E>{f, f, E::f32}), p_(0.6), {cx, cy});
    }
  }
  // Every size symbol must appear alone in some extent.
  std::set<std::string> bare, used;
  for (auto& [t, dims] : plan) {
    for (const Dim& d : dims) {
      if (!d.bare.empty()) bare.insert(d.bare);
      for (const std::string& s : d.syms) used.insert(s);
    }
  }
  for (const std::string& s : used) {
    if (bare.count(s)) continue;
    for (auto& [t, dims] : plan) {
      bool done = false;
      for (Dim& d : dims) {
        if (std::find(d.syms.begin(), d.syms.end(), s) != d.syms.end() && d.bare.empty()) {
          d.text = d.bare = d.sema_text = s;
          d.syms = {s};
          done = true;
          break;
        }
      }
      if (done) break;
    }
    bare.insert(s);
  }
  sizes_.assign(bare.begin(), bare.end());
  std::vector<std::string> params;
  for (auto& [t, dims] : plan) {
    std::string s = t.name + ": " + (t.sym ? "symmetric " : "") + "tensor<" + en(t.e) + ">[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
      s += (i ? ", " : "") + dims[i].text;
      t.dim_text.push_back(dims[i].sema_text);
    }
    params.push_back(s + "]");
    tensors_.push_back(t);
  }
  // matmul needs K to read the same to sema in both operands
  std::vector<Gemm> ok;
  for (const Gemm& g : gemms_) {
    if (tensors_[static_cast<std::size_t>(g.a)].dim_text[1] == tensors_[static_cast<std::size_t>(g.b)].dim_text[0]) ok.push_back(g);
  }
  gemms_ = ok;
  const int ns = static_cast<int>(pickw({3, 4, 3, 2}));
  for (int i = 0; i < ns; ++i) {
    const E e = rand_scalar_elem();
    const std::string n = user_name("s");
    params.push_back(n + ": " + en(e));
    scalars_.push_back({n, e == E::int_ ? E::i64 : e});
  }
  for (std::size_t i = params.size(); i > 1; --i) std::swap(params[i - 1], params[u(i)]);
  k.params = params;

  // Body: plain statements, or lets and roles.
  scopes_.emplace_back();
  roles_ = p_(0.22);
  if (!roles_) {
    const int n = static_cast<int>(between(2, 6));
    for (int i = 0; i < n && stmts_ < o_.max_stmts; ++i) stmt(k.body, 0);
  } else {
    auto top_let = [&](std::vector<GenNode>& out) {
      std::vector<GenNode>* saved = pre_;
      pre_ = &out;
      const std::string n = user_name("v");
      Ex x;
      const int kk = static_cast<int>(u(6));
      if (kk == 0) x = named_int(p_(0.5) ? "program" : "programs");
      else if (kk == 1) x = named_int(p_(0.5) ? "programs * 2" : "program + rank");
      else if (kk == 2) x = named_int("(rank + 1) % world");
      else if (kk == 3) x = value(pick_tile_shape(false), rand_scalar_elem(), 1);
      else x = value({}, rand_scalar_elem(), edepth());
      out.push_back(leaf("let " + n + " = " + x.t + ";"));
      ++stmts_;
      declare(n, x.ty, true);
      pre_ = saved;
    };
    const int lets = static_cast<int>(between(0, 2));
    for (int i = 0; i < lets; ++i) top_let(k.body);
    const int nroles = static_cast<int>(between(1, 3));
    for (int i = 0; i < nroles; ++i) {
      GenNode r;
      r.is_block = true;
      r.head = "role " + fresh(i == 0 ? "producer" : "consumer") + "(programs: " + role_programs() + ")";
      r.body = block(1, static_cast<int>(between(1, 3)));
      k.body.push_back(std::move(r));
      if (p_(0.2)) top_let(k.body);
    }
  }
  scopes_.pop_back();
  return k;
}

// ---- the program ------------------------------------------------------------------------
GenProgram Gen::run(std::uint64_t seed) {
  GenProgram p;
  p.seed = seed;
  const int nk = p_(0.12) ? 2 : 1;
  for (int k = 0; k < nk; ++k) p.kernels.push_back(kernel("k" + std::to_string(k), p.defines));
  return p;
}

}  // namespace irisc_fuzz::detail
