// The program generator's messages: slots (send / receive) and data-and-flag words
// (store / load<T> with flag:), modelling check_slots.cpp and check_flagged.cpp.
#include "tests/fuzz/gen_program_internal.hpp"

namespace irisc_fuzz::detail {

// ---- parameters -------------------------------------------------------------------------
// Extents of a slots or words tensor: 1-D, or rows of them (a row per rank, or two
// halves used in turn, as dsl/ccl's kernels have them).
std::vector<Dim> Gen::msg_dims(const std::vector<std::string>& syms) {
  std::vector<Dim> dims;
  if (p_(0.45)) {
    Dim r;
    r.text = r.sema_text = pick(std::vector<std::string>{"world", "2 * world", "world * 2", "4", "2"});
    dims.push_back(r);
  }
  dims.push_back(plain_dim(syms));
  return dims;
}

// ---- slots --------------------------------------------------------------------------------
// Slots are 1-D tile views of a tensor of f32, f16 or bf16 (all bits set is an empty
// slot): x[j] or a row's x[r, j], j a range, never an element or a 2-D view. Sema does
// not ask for a symmetric tensor: only `to:` does (a local one is this rank's own).
bool Gen::has_slots() const {
  return slots_ && !tensors_where([](const Tensor& t) { return isf(t.e); }).empty();
}

// receive(slots[j]) as a tile of e (a cast when no slots of e are at hand). It takes no
// from: (this rank's slots only), and gives a value, also as a statement.
Ex Gen::receive(Shape sh, E e) {
  const auto same = tensors_where([e](const Tensor& t) { return t.e == e; });
  const auto any = tensors_where([](const Tensor& t) { return isf(t.e); });
  const Tensor& t = tensors_[static_cast<std::size_t>(pick(!same.empty() && p_(0.85) ? same : any))];
  Ex x{"receive(" + *tile_view(t, sh) + ")", Ty::tile(t.e, sh)};
  return exact(x, e);
}

// send(slots[j], v [, to: r]): a statement; v a tile of the view's shape and exactly its
// element type (a tile never adapts, and sema rejects a scalar there). At times the
// receiving side instead.
void Gen::stmt_send(std::vector<GenNode>& out) {
  const Tensor& t = tensors_[static_cast<std::size_t>(pick(tensors_where([](const Tensor& x) { return isf(x.e); })))];
  const Shape sh = pick(shapes_1d());
  if (p_(0.3)) {
    // The other side: `let v = receive(slots[j]);`, a tile later statements use.
    const std::string n = user_name("v");
    out.push_back(leaf("let " + n + " = " + receive(sh, t.e).t + ";"));
    declare(n, Ty::tile(t.e, sh), true);
    return;
  }
  const std::string view = *tile_view(t, sh);
  const Ex v = exact(p_(0.25) ? receive(sh, t.e) : value(sh, t.e, edepth()), t.e);
  std::string s = "send(" + view + ", " + v.t;
  if (t.sym && p_(0.75)) s += ", to: " + ipos(1).t;
  out.push_back(leaf(s + ");"));
}

// ---- data-and-flag words ------------------------------------------------------------------
// A word is an element of a tensor<u64> (local ones too: only `to:` needs symmetric). It
// carries a value of at most 4 bytes and not the index type: f32, i32, u32 (and bool,
// which sema takes as well) one to a word, f16 and bf16 two, where a view must be a tile
// (its size is even: every tile size is).
bool Gen::has_words() const {
  return !tensors_where([](const Tensor& t) { return t.e == E::u64; }).empty();
}

bool Gen::word_ok(E e) { return e == E::f32 || e == E::f16 || e == E::bf16 || e == E::i32 || e == E::u32 || e == E::b; }

bool Gen::word_elem_ok(E e) { return e == E::f32 || e == E::i32 || e == E::u32 || e == E::b; }

const Tensor& Gen::words_tensor() {
  return tensors_[static_cast<std::size_t>(pick(tensors_where([](const Tensor& t) { return t.e == E::u64; })))];
}

// The flag: a scalar integer that sema converts to u64 by itself: an integer literal,
// the index type, or a u64 (anything else needs `as u64`).
Ex Gen::word_flag() {
  const int k = static_cast<int>(pickw({4, 4, 3, 2}));
  if (k == 0) return lit_int(between(0, 7));
  if (k == 1) return int_leaf();
  if (k == 2) return value({}, p_(0.6) ? E::u64 : E::int_, 1);
  return exact(ipos(1, false), E::u64);
}

// load<T>(words[j], flag: f): a tile of e (sh a 1-D shape) or, for a one-word type, an
// element. `load(...)` without <T> reads u32; no from: and no other: (sema rejects both).
Ex Gen::load_flagged(Shape sh, E e) {
  const Tensor& w = words_tensor();
  const std::string v = sh.scalar() ? elem_view(w) : *tile_view(w, sh);
  const std::string ty = e == E::u32 && p_(0.3) ? "" : std::string("<") + en(e) + ">";
  return Ex{"load" + ty + "(" + v + ", flag: " + word_flag().t + ")", Ty::tile(e, sh)};
}

// store(words[j], v [, to: r], flag: f): a statement; v of a word type and the view's
// shape (a scalar into one element only).
void Gen::stmt_store_flagged(std::vector<GenNode>& out) {
  const Tensor& w = words_tensor();
  static const E es[] = {E::f32, E::f16, E::bf16, E::i32, E::u32, E::b};
  E e = es[pickw({6, 3, 3, 3, 3, 1})];
  const auto shapes = shapes_1d();
  Shape sh;
  if (!shapes.empty() && (!word_elem_ok(e) || p_(0.7))) sh = pick(shapes);
  if (sh.scalar() && !word_elem_ok(e)) e = E::f32;  // a single 16-bit value would leave half a word
  const std::string view = sh.scalar() ? elem_view(w) : *tile_view(w, sh);
  Ex v;
  if (e == E::b) v = boolean(sh, edepth());
  else if (!sh.scalar() && p_(0.15)) v = load_flagged(sh, e);  // forwarded, as ll.iris's two-shot does
  else v = value(sh, e, edepth());
  std::vector<std::string> named = {"flag: " + word_flag().t};
  if (w.sym && p_(0.65)) named.push_back("to: " + ipos(1).t);
  out.push_back(leaf("store(" + view + ", " + exact(v, e).t + named_args(named) + ");"));
}

}  // namespace irisc_fuzz::detail
