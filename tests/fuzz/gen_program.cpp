// Random .iris programs (gen_program.hpp): names, scopes, literals, rendering, minimization.
#include "tests/fuzz/gen_program.hpp"

#include "tests/fuzz/gen_program_internal.hpp"

namespace irisc_fuzz {
namespace detail {

// ---- names, element types, scopes ----------------------------------------------------
// A user name: usually fresh, sometimes one that looks like a built-in function, a
// named-argument value, a C++ keyword or a name the CUDA emitter generates.
std::string Gen::user_name(const char* prefix) {
  static const char* tricky[] = {
      "start", "extent", "index", "load", "store", "sum", "min", "max", "fill", "zeros", "ones", "tiles",
      "blocks", "range", "acc", "order", "scope", "to", "from", "other", "op", "set", "add", "relaxed",
      "acquire", "system", "device", "block", "float", "half", "__half", "threadIdx", "blockIdx", "ctx", "s",
      "L64", "iris_bcast", "iris_program", "iris_first", "bound0", "main", "auto", "class", "template", "new",
      "this", "signed", "kPerThread", "matmul", "get", "put", "signal", "wait", "abs", "exp", "log", "sqrt",
      "atomic_add", "f", "e", "v0_x", "p_x", "s_N", "i", "j", "_", "__syncthreads", "nullptr", "NULL"};
  if (p_(0.07)) {
    const std::string n = tricky[u(std::size(tricky))];
    if (used_names_.insert(n).second) return n;
  }
  std::string n = fresh(prefix);
  while (n == "i32" || n == "i64") n = fresh(prefix);  // "i" + 32 is a type: [ExpectedToken]
  used_names_.insert(n);
  return n;
}

E Gen::rand_scalar_elem() {
  static const E es[] = {E::f32, E::f16, E::bf16, E::i32, E::i64, E::u32, E::u64, E::int_, E::b};
  return es[pickw({25, 9, 9, 12, 8, 10, 8, 14, 5})];
}

E Gen::rand_num_elem() {
  static const E es[] = {E::f32, E::f16, E::bf16, E::i32, E::i64, E::u32, E::u64, E::int_};
  return es[pickw({25, 9, 9, 12, 8, 10, 8, 14})];
}

E Gen::rand_tensor_elem() {
  static const E es[] = {E::f32, E::f16, E::bf16, E::i32, E::i64, E::u32, E::u64, E::b, E::int_};
  return es[pickw({30, 12, 12, 14, 8, 14, 10, 3, 3})];
}

E Gen::rand_int_elem() {
  static const E es[] = {E::i32, E::i64, E::u32, E::u64, E::int_};
  return es[pickw({3, 2, 3, 2, 4})];
}

// Copies: hoisting declares new variables while a caller still holds these.
std::vector<Var> Gen::visible(std::function<bool(const Var&)> f) const {
  std::vector<Var> out;
  for (const auto& s : scopes_) {
    for (const Var& v : s) {
      if (!v.hidden && f(v)) out.push_back(v);
    }
  }
  return out;
}

void Gen::declare(const std::string& name, Ty ty, bool mut, bool hidden) {
  scopes_.back().push_back({name, ty, mut, hidden});
}

std::vector<std::int64_t> Gen::range_sizes() const {
  std::set<std::int64_t> s;
  for (const Var& v : visible([](const Var& v) { return v.ty.k == K::Range; })) s.insert(v.ty.sh.size);
  return {s.begin(), s.end()};
}

bool Gen::has_range(std::int64_t n) const {
  return !visible([n](const Var& v) { return v.ty.k == K::Range && v.ty.sh.size == n; }).empty();
}

std::vector<int> Gen::tensors_where(std::function<bool(const Tensor&)> f) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (f(tensors_[i])) out.push_back(static_cast<int>(i));
  }
  return out;
}

// ---- literals ------------------------------------------------------------------------------
// An integer literal, sometimes an extreme one (sema folds them; overflow is avoided).
Ex Gen::lit_int_edge() {
  static const std::int64_t vs[] = {0, 1, -1, 31, 32, 255, 65535, 2147483647, -2147483647, 4294967295, 4611686018427387903};
  return lit_int(vs[u(std::size(vs))]);
}

Ex Gen::lit_int(std::int64_t v) {
  Ex x;
  x.t = v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  x.ty = Ty::scalar(E::int_);
  x.lit = x.konst = true;
  x.kv = v;
  return x;
}

Ex Gen::lit_float() {
  static const char* fs[] = {"0.5", "1.0", "2.0", "1.5", "0.25", "3.0", "1e-3", "100.0", "0.0", "7.5", "2.5e2", ".125"};
  static const char* edge[] = {"1e39", "1e-45", "3.4e38", "65504.0", "65520.0", "1e30", "1e-30", "0.1", "1e-320", "3.3895e38"};
  Ex x;
  x.t = p_(0.06) ? edge[u(std::size(edge))] : fs[u(std::size(fs))];
  x.ty = Ty::scalar(E::f32);
  x.lit = true;
  return x;
}

Ex Gen::lit_bool() {
  Ex x;
  x.t = p_(0.5) ? "true" : "false";
  x.ty = Ty::scalar(E::b);
  x.lit = true;
  return x;
}

// A compile-time-constant spelling of v: a literal, a compile-time parameter, or
// arithmetic on them (all folded by sema).
std::string Gen::const_text(std::int64_t v) {
  std::vector<std::string> c = {std::to_string(v)};
  for (auto& [n, cv] : consts_) {
    if (cv == v) c.push_back(n), c.push_back(n);
    if (cv > 0 && cv * 2 == v) c.push_back(n + " * 2");
    if (cv > 0 && v > 0 && cv % 2 == 0 && cv / 2 == v) c.push_back(n + " / 2");
    if (cv > 0 && cv * 4 == v) c.push_back("(" + n + " * 4)");
  }
  if (v % 2 == 0 && v >= 32) c.push_back("(" + std::to_string(v / 2) + " + " + std::to_string(v / 2) + ")");
  if (v >= 16) c.push_back(std::to_string(v * 2) + " / 2");
  return p_(0.45) ? c[0] : pick(c);
}

}  // namespace detail

namespace {

void render_nodes(const std::vector<GenNode>& nodes, int depth, std::string& out) {
  const std::string ind(static_cast<std::size_t>(depth) * 4, ' ');
  for (const GenNode& n : nodes) {
    if (!n.is_block) {
      if (!n.head.empty()) out += ind + n.head + "\n";  // the minimizer empties inlined lets
      continue;
    }
    out += ind + n.head + " {\n";
    render_nodes(n.body, depth + 1, out);
    const GenNode* cur = &n;
    while (cur->has_else) {
      if (cur->else_is_if && cur->else_body.size() == 1 && cur->else_body[0].is_block) {
        cur = &cur->else_body[0];
        out += ind + "} else " + cur->head + " {\n";
        render_nodes(cur->body, depth + 1, out);
        continue;
      }
      out += ind + "} else {\n";
      render_nodes(cur->else_body, depth + 1, out);
      break;
    }
    out += ind + "}\n";
  }
}

// Visits removable items in a fixed order; with `apply`, performs the k-th removal.
struct Walker {
  std::size_t k = 0;
  bool apply = false;
  bool done = false;
  std::size_t n = 0;
  bool hit() {
    if (apply && !done && n == k) {
      done = true;
      ++n;
      return true;
    }
    ++n;
    return false;
  }
  void nodes(std::vector<GenNode>& list) {
    for (std::size_t i = 0; i < list.size() && !done; ++i) {
      if (hit()) {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
      if (list[i].is_block) {
        if (hit()) {  // unwrap: the body replaces the block
          std::vector<GenNode> b = std::move(list[i].body);
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          list.insert(list.begin() + static_cast<std::ptrdiff_t>(i), std::make_move_iterator(b.begin()),
                      std::make_move_iterator(b.end()));
          return;
        }
      }
      if (list[i].has_else && hit()) {
        list[i].has_else = false;
        list[i].else_is_if = false;
        list[i].else_body.clear();
        return;
      }
      nodes(list[i].body);
      if (done) return;
      nodes(list[i].else_body);
      if (done) return;
    }
  }
  template <class T>
  void items(std::vector<T>& list) {
    for (std::size_t i = 0; i < list.size() && !done; ++i) {
      if (hit()) {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
  }
  void program(GenProgram& p) {
    if (p.kernels.size() > 1) items(p.kernels);
    for (GenKernel& k : p.kernels) {
      if (done) return;
      items(k.params);
      if (done) return;
      items(k.consts);
      if (done) return;
      nodes(k.body);
    }
  }
};

}  // namespace

std::string GenProgram::render() const {
  std::string out;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const GenKernel& k = kernels[i];
    if (i) out += "\n";
    out += "kernel " + k.name;
    if (!k.consts.empty()) {
      out += "<";
      for (std::size_t j = 0; j < k.consts.size(); ++j) out += (j ? ", " : "") + k.consts[j];
      out += ">";
    }
    out += "(";
    if (!k.params.empty()) {
      out += "\n";
      for (const std::string& p : k.params) out += "    " + p + ",\n";
    }
    out += ") {\n";
    render_nodes(k.body, 1, out);
    out += "}\n";
  }
  return out;
}

std::string GenProgram::define_args() const {
  std::string s;
  for (const auto& [n, v] : defines) {
    // Only defines some kernel still declares (a minimized program may have lost it).
    bool declared = false;
    for (const GenKernel& k : kernels) {
      for (const std::string& c : k.consts) declared |= c.rfind(n + ":", 0) == 0;
    }
    if (!declared) continue;
    s += (s.empty() ? "" : " ") + std::string("-D") + n + "=" + std::to_string(v);
  }
  return s;
}

GenProgram generate_program(std::uint64_t seed, const GenOptions& options) {
  return detail::Gen(seed, options).run(seed);
}

std::size_t count_items(const GenProgram& p) {
  GenProgram copy = p;
  Walker w;
  w.program(copy);
  return w.n;
}

GenProgram remove_item(const GenProgram& p, std::size_t k) {
  GenProgram copy = p;
  Walker w;
  w.k = k;
  w.apply = true;
  w.program(copy);
  return copy;
}

}  // namespace irisc_fuzz
