// The launch contract's one writer, one reader and evaluator (see launch_contract.hpp).
#include "compiler/contract/launch_contract.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <iterator>
#include <optional>
#include <nlohmann/json.hpp>

namespace irisc::contract {
namespace {

using nlohmann::json;
// Written with keys in declaration order (name first), so --emit=metadata reads well.
using ojson = nlohmann::ordered_json;

struct OpInfo {
  Op op;
  const char* name;
  int arity;
};
constexpr OpInfo kOps[] = {
    {Op::constant, "const", 0}, {Op::size, "size", 0}, {Op::world, "world", 0}, {Op::sms, "sms", 0},
    {Op::add, "add", 2},        {Op::sub, "sub", 2},   {Op::mul, "mul", 2},     {Op::div, "div", 2},
    {Op::rem, "rem", 2},        {Op::min, "min", 2},   {Op::max, "max", 2},     {Op::resident, "resident", 0},
};
const OpInfo& info(Op op) { return kOps[static_cast<int>(op)]; }

constexpr const char* kDTypeNames[] = {"f32", "f16", "bf16", "i32", "i64", "u32", "u64", "bool"};
constexpr int kDTypeBytes[] = {4, 2, 2, 4, 8, 4, 8, 1};
constexpr const char* kArgKinds[] = {"context", "param", "size", "sms", "tensor_map"};
constexpr const char* kMapRoles[] = {"a", "b_kn", "b_nk", "a_gathered", "c", "c_every_rank"};

// The most dynamic shared memory any target gives one program (with the opt-in).
constexpr std::int64_t max_dynamic_shared_bytes() {
  std::int64_t most = 0;
#define IRIS_TARGET(Id, Vendor, Toolchain, arch, mma_sync, wgmma, tma, mfma, warp, min_sms, max_sms, max_shared, gpus) \
  most = most > (max_shared) ? most : (max_shared);
#include "compiler/target/targets.def"
  return most;
}
constexpr std::int64_t kMaxDynamicSharedBytes = max_dynamic_shared_bytes();

// ---- writing ---------------------------------------------------------------------------
// Postfix -> nested JSON: 8, "world", "sms", ["size", 0], ["mul", a, b].
ojson expr_json(const Expr& e) {
  std::vector<ojson> stack;
  for (const ExprOp& o : e.ops) {
    switch (o.op) {
      case Op::constant: stack.emplace_back(o.value); break;
      case Op::size: stack.push_back(ojson::array({"size", o.value})); break;
      case Op::world:
      case Op::sms:
      case Op::resident: stack.emplace_back(info(o.op).name); break;
      default: {
        ojson b = std::move(stack.back());
        stack.pop_back();
        ojson a = std::move(stack.back());
        stack.pop_back();
        stack.push_back(ojson::array({info(o.op).name, std::move(a), std::move(b)}));
      }
    }
  }
  return stack.empty() ? ojson() : std::move(stack.back());
}

// ---- reading -----------------------------------------------------------------------------
[[noreturn]] void bad(const std::string& where, const std::string& why) { throw Error(where + ": " + why); }

// nlohmann keeps integers above INT64_MAX as unsigned, and get<int64_t> would wrap them
// to negative values: those are out of range, not integers of the contract.
bool int64_of(const json& j, std::int64_t* out) {
  if (j.is_number_unsigned()) {
    const std::uint64_t u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
    *out = static_cast<std::int64_t>(u);
    return true;
  }
  if (!j.is_number_integer()) return false;
  *out = j.get<std::int64_t>();
  return true;
}

std::int64_t int64_at(const json& j, const std::string& where) {
  std::int64_t v = 0;
  if (!int64_of(j, &v)) {
    bad(where, j.is_number_integer() ? "integer " + j.dump() + " does not fit in 64 bits" : "expected an integer, not " + j.dump());
  }
  return v;
}

void expr_ops(const json& j, const std::string& where, Expr& out) {
  if (out.ops.size() >= kMaxExprOps) bad(where, "expression longer than " + std::to_string(kMaxExprOps) + " operations");
  if (j.is_number()) {
    out.ops.push_back({Op::constant, int64_at(j, where)});
    return;
  }
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "world" || s == "sms" || s == "resident") {
      out.ops.push_back({s == "world" ? Op::world : s == "sms" ? Op::sms : Op::resident, 0});
      return;
    }
    bad(where, "unknown value '" + s + "'");
  }
  if (!j.is_array() || j.empty() || !j[0].is_string()) {
    bad(where, "expected an integer, \"world\", \"sms\", \"resident\" or [op, ...]");
  }
  const std::string op = j[0].get<std::string>();
  if (op == "size") {
    if (j.size() != 2 || !j[1].is_number_integer()) bad(where, "expected [\"size\", index]");
    out.ops.push_back({Op::size, int64_at(j[1], where)});
    return;
  }
  for (const OpInfo& oi : kOps) {
    if (oi.arity == 2 && op == oi.name) {
      if (j.size() != 3) bad(where, "'" + op + "' takes two operands");
      expr_ops(j[1], where, out);
      expr_ops(j[2], where, out);
      out.ops.push_back({oi.op, 0});
      return;
    }
  }
  bad(where, "unknown operation '" + op + "'");
}

// Folds the constant parts of `e`: an operation on constants that overflows, or a
// division by a constant zero, would fail at every launch, so it fails the read. The
// value when all of `e` is constant.
std::optional<std::int64_t> fold_constants(const Expr& e, const std::string& where, std::span<const std::string> sizes) {
  std::vector<std::optional<std::int64_t>> stack;
  for (const ExprOp& o : e.ops) {
    if (info(o.op).arity == 0) {
      stack.push_back(o.op == Op::constant ? std::optional<std::int64_t>(o.value) : std::nullopt);
      continue;
    }
    const std::optional<std::int64_t> y = stack.back();
    stack.pop_back();
    const std::optional<std::int64_t> x = stack.back();
    stack.pop_back();
    if ((o.op == Op::div || o.op == Op::rem) && y == 0) bad(where, to_string(e, sizes) + " " + describe(EvalError::division_by_zero));
    std::optional<std::int64_t> v;
    if (x && y) {
      std::int64_t r = 0;
      const EvalError err = eval(Expr{{{Op::constant, *x}, {Op::constant, *y}, {o.op, 0}}}, {}, &r);
      if (err != EvalError::ok) bad(where, to_string(e, sizes) + " " + describe(err));
      v = r;
    }
    stack.push_back(v);
  }
  return stack.back();
}

// An expression over the kernel's `sizes` (and sms and resident where allowed); when it
// is a constant, it is at least `min`.
Expr read_expr(const json& j, const std::string& where, std::span<const std::string> sizes, bool sms_allowed, std::int64_t min) {
  Expr e;
  expr_ops(j, where, e);
  for (const ExprOp& o : e.ops) {
    if (o.op == Op::size && (o.value < 0 || o.value >= static_cast<std::int64_t>(sizes.size()))) {
      bad(where, "size symbol " + std::to_string(o.value) + " does not exist");
    }
    if ((o.op == Op::sms || o.op == Op::resident) && !sms_allowed) {
      bad(where, std::string(info(o.op).name) + " is not known here");
    }
  }
  const std::optional<std::int64_t> v = fold_constants(e, where, sizes);
  if (v && *v < min) bad(where, "the constant " + std::to_string(*v) + " is less than " + std::to_string(min));
  return e;
}

const json& field(const json& j, const char* name, const std::string& where) {
  if (!j.is_object()) bad(where, "expected an object");
  auto it = j.find(name);
  if (it == j.end()) bad(where, std::string("missing \"") + name + "\"");
  return *it;
}

std::string text(const json& j, const char* name, const std::string& where) {
  const json& f = field(j, name, where);
  if (!f.is_string() || f.get_ref<const std::string&>().empty()) bad(where, std::string("\"") + name + "\" must be a non-empty string");
  return f.get<std::string>();
}

std::int64_t integer(const json& j, const char* name, const std::string& where, std::int64_t lo, std::int64_t hi) {
  const json& f = field(j, name, where);
  if (!f.is_number_integer()) bad(where, std::string("\"") + name + "\" must be an integer");
  std::int64_t v = 0;
  if (!int64_of(f, &v) || v < lo || v > hi) {
    bad(where, std::string("\"") + name + "\" = " + f.dump() + " is outside [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  }
  return v;
}

const json& array(const json& j, const char* name, const std::string& where) {
  const json& f = field(j, name, where);
  if (!f.is_array()) bad(where, std::string("\"") + name + "\" must be an array");
  return f;
}

// nlohmann's parser recurses once per nesting level: refuse deep texts before parsing.
void check_nesting(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) throw Error("metadata nested deeper than " + std::to_string(kMaxNesting) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

Kernel read_kernel(const json& k, std::size_t index) {
  Kernel out;
  std::string where = "kernel " + std::to_string(index);
  out.name = text(k, "name", where);
  where = "kernel '" + out.name + "'";
  out.symbol = text(k, "symbol", where);
  out.threads = static_cast<int>(integer(k, "threads", where, 1, kMaxThreads));
  out.min_blocks_per_sm = static_cast<int>(integer(k, "min_blocks_per_sm", where, 0, kMaxMinBlocksPerSm));
  // Absent: no clusters (kernels that are no sm90 GEMM need not say so).
  out.cluster = k.contains("cluster") ? static_cast<int>(integer(k, "cluster", where, 1, kMaxCluster)) : 1;
  out.dynamic_shared_bytes = integer(k, "dynamic_shared_bytes", where, 0, kMaxDynamicSharedBytes);
  const json& sizes = array(k, "sizes", where);
  if (sizes.size() > kMaxSizes) bad(where, std::to_string(sizes.size()) + " size symbols, more than " + std::to_string(kMaxSizes));
  for (const json& s : sizes) {
    if (!s.is_string() || s.get_ref<const std::string&>().empty()) bad(where, "size names must be non-empty strings");
    for (const std::string& seen : out.sizes) {
      if (seen == s.get_ref<const std::string&>()) bad(where, "size '" + seen + "' is named twice");
    }
    out.sizes.push_back(s.get<std::string>());
  }
  const json& constants = field(k, "constants", where);
  if (!constants.is_object()) bad(where, "\"constants\" must be an object");
  for (const auto& [n, v] : constants.items()) {
    if (!v.is_number_integer()) bad(where, "constant '" + n + "' must be an integer");
    out.constants.emplace_back(n, int64_at(v, where + " constant '" + n + "'"));
  }
  for (const json& p : array(k, "params", where)) {
    Param prm;
    prm.name = text(p, "name", where + " parameter");
    const std::string pw = where + " parameter '" + prm.name + "'";
    for (const Param& seen : out.params) {
      if (seen.name == prm.name) bad(pw, "a parameter of this name comes before it");
    }
    const std::string kind = text(p, "kind", pw);
    if (kind != "tensor" && kind != "scalar") bad(pw, "kind '" + kind + "' is neither tensor nor scalar");
    prm.tensor = kind == "tensor";
    const std::string dt = text(p, "dtype", pw);
    bool known = false;
    for (int t = 0; t < 8; ++t) {
      if (dt == kDTypeNames[t]) prm.dtype = static_cast<DType>(t), known = true;
    }
    if (!known) bad(pw, "unknown dtype '" + dt + "'");
    if (prm.tensor) {
      const json& sym = field(p, "symmetric", pw);
      if (!sym.is_boolean()) bad(pw, "\"symmetric\" must be true or false");
      prm.symmetric = sym.get<bool>();
      for (const json& d : array(p, "dims", pw)) prm.dims.push_back(read_expr(d, pw + " extent", out.sizes, false, 0));
      if (prm.dims.empty() || prm.dims.size() > 8) bad(pw, "a tensor has 1 to 8 dimensions");
    }
    out.params.push_back(std::move(prm));
  }
  // Every size symbol is bound by a bare extent of some tensor.
  for (std::size_t s = 0; s < out.sizes.size(); ++s) {
    bool bound = false;
    for (const Param& p : out.params) {
      for (const Expr& d : p.dims) bound = bound || (d.ops.size() == 1 && d.ops[0].op == Op::size && d.ops[0].value == static_cast<std::int64_t>(s));
    }
    if (!bound) bad(where, "size '" + out.sizes[s] + "' is not the extent of any tensor");
  }
  const json& roles = array(k, "roles", where);
  if (roles.size() > kMaxRoles) bad(where, std::to_string(roles.size()) + " roles, more than " + std::to_string(kMaxRoles));
  for (const json& r : roles) {
    Role role;
    role.name = text(r, "name", where + " role");
    for (const Role& seen : out.roles) {
      if (seen.name == role.name) bad(where, "role '" + role.name + "' is declared twice");
    }
    role.programs = read_expr(field(r, "programs", where + " role '" + role.name + "'"), where + " role '" + role.name + "'",
                              {}, true, 1);
    for (const ExprOp& o : role.programs.ops) {
      if (o.op == Op::size) bad(where + " role '" + role.name + "'", "program counts cannot use sizes");
    }
    out.roles.push_back(std::move(role));
  }
  const json& grid = field(k, "grid", where);
  if (out.roles.empty() == grid.is_null()) bad(where, "a kernel has a grid exactly when it has no roles");
  if (!grid.is_null()) out.grid = read_expr(grid, where + " grid", out.sizes, true, 1);
  // Arguments: the context first, then each parameter, size and sms exactly once.
  std::vector<int> seen_params(out.params.size()), seen_sizes(out.sizes.size());
  int contexts = 0, sms = 0;
  const json& args = array(k, "args", where);
  if (args.size() > kMaxArgs) bad(where, std::to_string(args.size()) + " arguments, more than " + std::to_string(kMaxArgs));
  for (const json& a : args) {
    Arg arg;
    const std::string kind = text(a, "kind", where + " argument");
    int ki = -1;
    for (int i = 0; i < 5; ++i) {
      if (kind == kArgKinds[i]) ki = i;
    }
    if (ki < 0) bad(where, "unknown argument kind '" + kind + "'");
    arg.kind = static_cast<ArgKind>(ki);
    arg.bytes = static_cast<int>(integer(a, "bytes", where + " argument", 1, 4096));
    switch (arg.kind) {
      case ArgKind::context:
        if (!out.args.empty()) bad(where, "the context must be the first argument");
        ++contexts;
        break;
      case ArgKind::param: {
        arg.index = static_cast<int>(integer(a, "index", where + " argument", 0, static_cast<std::int64_t>(out.params.size()) - 1));
        const Param& p = out.params[static_cast<std::size_t>(arg.index)];
        if (arg.bytes != (p.tensor ? 8 : byte_size(p.dtype))) bad(where, "argument '" + p.name + "' has the wrong size");
        ++seen_params[static_cast<std::size_t>(arg.index)];
        break;
      }
      case ArgKind::size:
        arg.index = static_cast<int>(integer(a, "index", where + " argument", 0, static_cast<std::int64_t>(out.sizes.size()) - 1));
        if (arg.bytes != 8) bad(where, "size arguments are 8 bytes");
        ++seen_sizes[static_cast<std::size_t>(arg.index)];
        break;
      case ArgKind::sms:
        if (arg.bytes != 8) bad(where, "the sms argument is 8 bytes");
        ++sms;
        break;
      case ArgKind::tensor_map: {
        const std::string aw = where + " tensor map";
        arg.index = static_cast<int>(integer(a, "index", aw, 0, static_cast<std::int64_t>(out.params.size()) - 1));
        const Param& p = out.params[static_cast<std::size_t>(arg.index)];
        if (!p.tensor || p.dims.size() != 2 || (p.dtype != DType::bf16 && p.dtype != DType::f16)) {
          bad(aw, "parameter '" + p.name + "' is not a 2-D tensor of bf16 or f16");
        }
        const std::string role = text(a, "role", aw);
        int ri = -1;
        for (int i = 0; i < static_cast<int>(std::size(kMapRoles)); ++i) {
          if (role == kMapRoles[i]) ri = i;
        }
        if (ri < 0) bad(aw, "unknown role '" + role + "'");
        arg.role = static_cast<MapRole>(ri);
        if (arg.bytes != tensor_map_bytes(arg.role)) {
          bad(aw, "tensor maps of role " + role + " are " + std::to_string(tensor_map_bytes(arg.role)) + " bytes");
        }
        if (arg.role == MapRole::a_gathered && !p.symmetric) bad(aw, "parameter '" + p.name + "' is gathered but not symmetric");
        if (arg.role == MapRole::c_every_rank && !p.symmetric) {
          bad(aw, "parameter '" + p.name + "' is stored to on every rank but not symmetric");
        }
        const json& box = field(a, "box", aw);
        if (!box.is_array() || box.size() != 2 || !box[0].is_number_integer() || !box[1].is_number_integer()) {
          bad(aw, "\"box\" must be [rows, cols]");
        }
        const std::int64_t rows = int64_at(box[0], aw), cols = int64_at(box[1], aw);
        // TMA reads boxes of 1..256 elements per dimension; a row of the box is a
        // multiple of 16 bytes and at most one 128-byte swizzle span.
        if (rows < 1 || rows > 256 || cols < 8 || cols > 64 || cols % 8) {
          bad(aw, "box [" + std::to_string(rows) + ", " + std::to_string(cols) + "] is not one TMA reads");
        }
        arg.box_rows = static_cast<int>(rows);
        arg.box_cols = static_cast<int>(cols);
        break;
      }
    }
    out.args.push_back(arg);
  }
  if (contexts != 1 || sms != 1) bad(where, "the arguments need one context and one sms");
  // Laid out as the driver packs them: each at its alignment (tensor maps at 64).
  std::int64_t layout = 0;
  for (const Arg& a : out.args) {
    const std::int64_t align = a.kind == ArgKind::tensor_map ? kTensorMapAlign : std::bit_floor(static_cast<unsigned>(std::min(a.bytes, 8)));
    layout = (layout + align - 1) / align * align + a.bytes;
  }
  if (layout > kMaxArgBytes) {
    bad(where, "the arguments take " + std::to_string(layout) + " bytes, more than the " + std::to_string(kMaxArgBytes) +
                   " a kernel is passed");
  }
  for (std::size_t i = 0; i < seen_params.size(); ++i) {
    if (seen_params[i] != 1) bad(where, "parameter '" + out.params[i].name + "' is not passed exactly once");
  }
  for (std::size_t i = 0; i < seen_sizes.size(); ++i) {
    if (seen_sizes[i] != 1) bad(where, "size '" + out.sizes[i] + "' is not passed exactly once");
  }
  return out;
}

}  // namespace

const char* name(DType t) { return kDTypeNames[static_cast<int>(t)]; }
const char* name(MapRole r) { return kMapRoles[static_cast<int>(r)]; }
int byte_size(DType t) { return kDTypeBytes[static_cast<int>(t)]; }

const char* describe(EvalError e) {
  switch (e) {
    case EvalError::ok: return "ok";
    case EvalError::overflow: return "overflows 64 bits";
    case EvalError::division_by_zero: return "divides by zero";
    case EvalError::bad_program: return "is malformed";
  }
  return "?";
}

EvalError eval(const Expr& e, const Bindings& b, std::int64_t* out) {
  std::int64_t stack[kMaxExprOps];
  std::size_t n = 0;
  for (const ExprOp& o : e.ops) {
    std::int64_t v = 0;
    switch (o.op) {
      case Op::constant: v = o.value; break;
      case Op::size:
        if (o.value < 0 || o.value >= static_cast<std::int64_t>(b.sizes.size())) return EvalError::bad_program;
        v = b.sizes[static_cast<std::size_t>(o.value)];
        break;
      case Op::world: v = b.world; break;
      case Op::sms: v = b.sms; break;
      case Op::resident: v = b.resident; break;
      default: {
        if (n < 2) return EvalError::bad_program;
        const std::int64_t y = stack[--n], x = stack[--n];
        switch (o.op) {
          case Op::add:
            if (__builtin_add_overflow(x, y, &v)) return EvalError::overflow;
            break;
          case Op::sub:
            if (__builtin_sub_overflow(x, y, &v)) return EvalError::overflow;
            break;
          case Op::mul:
            if (__builtin_mul_overflow(x, y, &v)) return EvalError::overflow;
            break;
          case Op::div:
          case Op::rem:
            if (y == 0) return EvalError::division_by_zero;
            if (x == INT64_MIN && y == -1) return EvalError::overflow;
            v = o.op == Op::div ? x / y : x % y;
            break;
          case Op::min: v = x < y ? x : y; break;
          case Op::max: v = x > y ? x : y; break;
          default: return EvalError::bad_program;
        }
      }
    }
    if (n == kMaxExprOps) return EvalError::bad_program;
    stack[n++] = v;
  }
  if (n != 1) return EvalError::bad_program;
  *out = stack[0];
  return EvalError::ok;
}

std::string to_string(const Expr& e, std::span<const std::string> size_names) {
  struct Part {
    std::string text;
    bool infix;  // needs parentheses as an operand of another infix operation
  };
  std::vector<Part> stack;
  for (const ExprOp& o : e.ops) {
    switch (o.op) {
      case Op::constant: stack.push_back({std::to_string(o.value), false}); break;
      case Op::size:
        stack.push_back({o.value >= 0 && o.value < static_cast<std::int64_t>(size_names.size())
                             ? size_names[static_cast<std::size_t>(o.value)]
                             : "?",
                         false});
        break;
      case Op::world: stack.push_back({"world", false}); break;
      case Op::sms: stack.push_back({"sms", false}); break;
      case Op::resident: stack.push_back({"resident", false}); break;
      default: {
        if (stack.size() < 2) return "?";
        Part y = std::move(stack.back());
        stack.pop_back();
        Part x = std::move(stack.back());
        stack.pop_back();
        if (o.op == Op::min || o.op == Op::max) {
          stack.push_back({std::string(info(o.op).name) + "(" + x.text + ", " + y.text + ")", false});
        } else {
          static const char* sym[] = {"", "", "", "", " + ", " - ", " * ", " / ", " % "};
          auto operand = [](const Part& p) { return p.infix ? "(" + p.text + ")" : p.text; };
          stack.push_back({operand(x) + sym[static_cast<int>(o.op)] + operand(y), true});
        }
      }
    }
  }
  return stack.size() == 1 ? stack[0].text : "?";
}

std::string write(const Module& module, int indent) {
  ojson kernels = ojson::array();
  for (const Kernel& k : module.kernels) {
    ojson params = ojson::array();
    for (const Param& p : k.params) {
      ojson pj = {{"name", p.name}, {"kind", p.tensor ? "tensor" : "scalar"}, {"dtype", name(p.dtype)}};
      if (p.tensor) {
        pj["symmetric"] = p.symmetric;
        ojson dims = ojson::array();
        for (const Expr& d : p.dims) dims.push_back(expr_json(d));
        pj["dims"] = std::move(dims);
      }
      params.push_back(std::move(pj));
    }
    ojson roles = ojson::array();
    for (const Role& r : k.roles) roles.push_back({{"name", r.name}, {"programs", expr_json(r.programs)}});
    ojson constants = ojson::object();
    for (const auto& [n, v] : k.constants) constants[n] = v;
    ojson args = ojson::array();
    for (const Arg& a : k.args) {
      ojson aj = {{"kind", kArgKinds[static_cast<int>(a.kind)]}, {"bytes", a.bytes}};
      if (a.kind == ArgKind::param || a.kind == ArgKind::size || a.kind == ArgKind::tensor_map) aj["index"] = a.index;
      if (a.kind == ArgKind::tensor_map) {
        aj["role"] = name(a.role);
        aj["box"] = ojson::array({a.box_rows, a.box_cols});
      }
      args.push_back(std::move(aj));
    }
    ojson kj = ojson::object();
    kj["name"] = k.name;
    kj["symbol"] = k.symbol;
    kj["threads"] = k.threads;
    kj["min_blocks_per_sm"] = k.min_blocks_per_sm;
    if (k.cluster > 1) kj["cluster"] = k.cluster;
    kj["dynamic_shared_bytes"] = k.dynamic_shared_bytes;
    kj["grid"] = k.roles.empty() ? expr_json(k.grid) : ojson();
    kj["roles"] = std::move(roles);
    kj["constants"] = std::move(constants);
    kj["sizes"] = k.sizes;
    kj["params"] = std::move(params);
    kj["args"] = std::move(args);
    kernels.push_back(std::move(kj));
  }
  ojson j = ojson::object();
  j["format"] = "irisc-metadata";
  j["version"] = kVersion;
  j["kernels"] = std::move(kernels);
  return j.dump(indent);
}

Module read(std::string_view text) {
  check_nesting(text);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(std::string("metadata is not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "irisc-metadata") throw Error("not irisc metadata");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<std::int64_t>() != kVersion) {
    throw Error("metadata version " + (j.contains("version") ? j["version"].dump() : std::string("(none)")) + " is not " +
                std::to_string(kVersion) + " (recompile the kernel with this irisc)");
  }
  Module m;
  try {
    const json& ks = array(j, "kernels", "metadata");
    if (ks.size() > kMaxKernels) throw Error("metadata has " + std::to_string(ks.size()) + " kernels, more than " + std::to_string(kMaxKernels));
    for (std::size_t i = 0; i < ks.size(); ++i) {
      m.kernels.push_back(read_kernel(ks[i], i));
      for (std::size_t seen = 0; seen < i; ++seen) {
        if (m.kernels[seen].name == m.kernels[i].name) throw Error("metadata has two kernels named '" + m.kernels[i].name + "'");
      }
    }
  } catch (const json::exception& e) {
    throw Error(std::string("malformed metadata: ") + e.what());
  }
  return m;
}

}  // namespace irisc::contract
