// The one place that knows where TIR nodes keep their children. Every pass, analysis,
// the verifier and the emitters walk the IR through these functions, so a field added
// to a node is seen by all of them at once (a value hiding in a view bound or a rank
// can no longer be missed by one walker and seen by another).
//
//   for_each_child(value, f)   f(ValuePtr&) on the direct children of a value: its
//                              operands, every field of `view` and `view_b`, `rank`
//   for_each_value(stmt, f)    f(ValuePtr&) on the values a statement holds directly
//   for_each_body(stmt, f)     f(std::vector<StmtPtr>&) on its nested statement lists
//   walk(value, f)             f(const Value&) on a value and everything under it
//   walk(body, on_stmt, on_value)  every statement (pre-order) and every value in them
//   any_value(body, pred)      whether some value anywhere satisfies pred
//   mutate(body, f)            f(ValuePtr&) on every value slot, children first, so f
//                              may replace a node after its children were rewritten
//
// Values may be shared between parents (sema reuses a range for its start and extent);
// `walk` visits a shared value once per parent, and mutators must keep a replaced node's
// meaning, which every rewrite that folds or simplifies does.
#pragma once

#include <type_traits>
#include <vector>

#include "compiler/tir/tir.hpp"

namespace irisc::tir {

// Every child slot, null ones included (for comparing two nodes slot by slot).
template <class ViewT, class F>
void for_each_slot(ViewT& view, F&& f)
  requires std::is_same_v<std::remove_const_t<ViewT>, View>
{
  for (auto* p : {&view.offset, &view.extent, &view.row_extent, &view.ld, &view.full}) f(*p);
  for (auto& i : view.index) f(i);
}

template <class ValueT, class F>
void for_each_slot(ValueT& v, F&& f)
  requires std::is_same_v<std::remove_const_t<ValueT>, Value>
{
  for (auto& o : v.operands) f(o);
  for_each_slot(v.view, f);
  for_each_slot(v.view_b, f);
  f(v.rank);
}

template <class NodeT, class F>
void for_each_child(NodeT& node, F&& f) {
  for_each_slot(node, [&](auto& slot) {
    if (slot) f(slot);
  });
}

template <class StmtT, class F>
void for_each_value(StmtT& s, F&& f)
  requires std::is_same_v<std::remove_const_t<StmtT>, Stmt>
{
  for (auto* p : {&s.value, &s.rank, &s.lo, &s.hi, &s.hi2, &s.stride, &s.flag}) {
    if (*p) f(*p);
  }
  for_each_child(s.view, f);
}

template <class StmtT, class F>
void for_each_body(StmtT& s, F&& f)
  requires std::is_same_v<std::remove_const_t<StmtT>, Stmt>
{
  f(s.body);
  f(s.else_body);
}

template <class F>
void walk(const Value& v, F&& f) {
  f(v);
  for_each_child(v, [&](const ValuePtr& c) { walk(*c, f); });
}

template <class FS, class FV>
void walk(const std::vector<StmtPtr>& body, FS&& on_stmt, FV&& on_value) {
  for (const StmtPtr& s : body) {
    on_stmt(*s);
    for_each_value(*s, [&](const ValuePtr& v) { walk(*v, on_value); });
    for_each_body(*s, [&](const std::vector<StmtPtr>& b) { walk(b, on_stmt, on_value); });
  }
}

template <class Pred>
bool any_value(const Value& v, Pred&& pred) {
  if (pred(v)) return true;
  bool found = false;
  for_each_child(v, [&](const ValuePtr& c) { found = found || any_value(*c, pred); });
  return found;
}

template <class Pred>
bool any_value(const std::vector<StmtPtr>& body, Pred&& pred) {
  bool found = false;
  walk(body, [](const Stmt&) {}, [&](const Value& v) { found = found || pred(v); });
  return found;
}

template <class F>
void mutate(ValuePtr& v, F&& f) {
  for_each_child(*v, [&](ValuePtr& c) { mutate(c, f); });
  f(v);
}

template <class F>
void mutate(std::vector<StmtPtr>& body, F&& f) {
  for (StmtPtr& s : body) {
    for_each_value(*s, [&](ValuePtr& v) { mutate(v, f); });
    for_each_body(*s, [&](std::vector<StmtPtr>& b) { mutate(b, f); });
  }
}

// Every value of a kernel outside its body: tensor extents, the grid, role program counts.
template <class F>
void for_each_launch_value(const Kernel& k, F&& f) {
  for (const Param& p : k.params) {
    for (const ValuePtr& d : p.dims) f(*d);
  }
  if (k.grid) f(*k.grid);
  for (const Role& r : k.roles) {
    if (r.programs) f(*r.programs);
  }
}

}  // namespace irisc::tir
