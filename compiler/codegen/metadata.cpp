// The launch contract from TIR (see metadata.hpp).
#include "compiler/codegen/metadata.hpp"

#include <cstdio>

#include "compiler/tir/gemm_loop.hpp"
#include "templates/include/iris/device/context.hpp"
#include "templates/include/iris/device/gemm/shapes.hpp"

static_assert(irisc::contract::kMaxRanks == iris::device::kMaxRanks, "the contract's rank limit is the device library's");

namespace irisc {
namespace {

using namespace tir;

contract::DType dtype(ScalarType t) {
  switch (t) {
    case ScalarType::f32: return contract::DType::f32;
    case ScalarType::f16: return contract::DType::f16;
    case ScalarType::bf16: return contract::DType::bf16;
    case ScalarType::i32: return contract::DType::i32;
    case ScalarType::u32: return contract::DType::u32;
    case ScalarType::u64: return contract::DType::u64;
    case ScalarType::boolean: return contract::DType::boolean;
    case ScalarType::i64:
    case ScalarType::int_: return contract::DType::i64;
  }
  return contract::DType::i64;
}

// Launch values (the verifier allows only these kinds in them) in postfix.
void to_ops(const Value& v, contract::Expr& out) {
  switch (v.kind) {
    case ValueKind::Const: out.ops.push_back({contract::Op::constant, v.int_value}); return;
    case ValueKind::SizeRef: out.ops.push_back({contract::Op::size, v.size}); return;
    case ValueKind::BuiltinRef:
      out.ops.push_back({v.builtin == Builtin::sms        ? contract::Op::sms
                         : v.builtin == Builtin::resident ? contract::Op::resident
                                                          : contract::Op::world,
                         0});
      return;
    case ValueKind::Cast: to_ops(*v.operands[0], out); return;
    case ValueKind::Binary: {
      to_ops(*v.operands[0], out);
      to_ops(*v.operands[1], out);
      contract::Op op = contract::Op::add;
      switch (v.binop) {
        case BinOp::sub: op = contract::Op::sub; break;
        case BinOp::mul: op = contract::Op::mul; break;
        case BinOp::div: op = contract::Op::div; break;
        case BinOp::rem: op = contract::Op::rem; break;
        case BinOp::min: op = contract::Op::min; break;
        case BinOp::max: op = contract::Op::max; break;
        default: break;
      }
      out.ops.push_back({op, 0});
      return;
    }
    default: return;  // not a launch value (the verifier rejects it before codegen)
  }
}

contract::Expr expr(const Value& v) {
  contract::Expr e;
  to_ops(v, e);
  return e;
}

}  // namespace

std::string kernel_symbol(const std::string& name) { return "iris_k_" + name; }

contract::Kernel launch_contract(const Kernel& k) {
  contract::Kernel c;
  c.name = k.name;
  c.symbol = kernel_symbol(k.name);
  c.threads = k.block_threads;
  c.min_blocks_per_sm = k.min_blocks_per_sm;
  c.dynamic_shared_bytes = k.dynamic_shared_bytes;
  if (k.roles.empty()) c.grid = expr(*k.grid);
  for (const Role& r : k.roles) c.roles.push_back({r.name, expr(*r.programs)});
  c.constants = k.constants;
  c.sizes = k.size_symbols;
  c.args.push_back({contract::ArgKind::context, -1, static_cast<int>(sizeof(iris::device::Context))});
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    contract::Param cp;
    cp.name = p.name;
    cp.tensor = p.is_tensor;
    cp.dtype = dtype(p.elem);
    cp.symmetric = p.symmetric;
    for (const ValuePtr& d : p.dims) cp.dims.push_back(expr(*d));
    c.args.push_back({contract::ArgKind::param, static_cast<int>(i), p.is_tensor ? 8 : contract::byte_size(cp.dtype)});
    c.params.push_back(std::move(cp));
  }
  for (std::size_t s = 0; s < k.size_symbols.size(); ++s) c.args.push_back({contract::ArgKind::size, static_cast<int>(s), 8});
  c.args.push_back({contract::ArgKind::sms, -1, 8});
  // A kernel run by the sm90 GEMM template reads A and B through TMA: one tensor map
  // each, with the template's boxes (gemm/shapes.hpp), after everything else.
  GemmLoop g;
  if (k.gemm.stages && match_gemm_loop(k, &g).empty()) {
    namespace gemm = iris::device::gemm;
    const gemm::Sm90Shape shape{static_cast<int>(g.bm), static_cast<int>(g.bn), 64, k.gemm.stages, k.gemm.group_m,
                                k.gemm.cluster};
    c.cluster = k.gemm.cluster;
    const gemm::Box2D a = gemm::sm90_box_a(shape);
    const gemm::Box2D b = gemm::sm90_box_b(shape, g.b_nk ? gemm::BLayout::nk : gemm::BLayout::kn);
    const contract::MapRole a_role = g.a_gathered ? contract::MapRole::a_gathered : contract::MapRole::a;
    c.args.push_back({contract::ArgKind::tensor_map, g.a, contract::tensor_map_bytes(a_role), a_role, a.outer, a.inner});
    c.args.push_back({contract::ArgKind::tensor_map, g.b, contract::kTensorMapBytes,
                      g.b_nk ? contract::MapRole::b_nk : contract::MapRole::b_kn, b.outer, b.inner});
    // The tensors the epilogue stores its tiles into by TMA, in boxes of a consumer's 64
    // rows by 64 columns (its staging buffer's), after A and B.
    for (const TmaStore& t : epilogue_tma_stores(k, g)) {
      const contract::MapRole role = t.every_rank ? contract::MapRole::c_every_rank : contract::MapRole::c;
      c.args.push_back({contract::ArgKind::tensor_map, t.param, contract::tensor_map_bytes(role), role, 64, 64});
    }
  }
  return c;
}

contract::Module launch_contract(const Module& module) {
  contract::Module m;
  for (const Kernel& k : module.kernels) m.kernels.push_back(launch_contract(k));
  return m;
}

std::string cuda_string_literal(const std::string& text) {
  std::string out = "\"";
  std::size_t col = 0;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
    if (++col % 100 == 0) out += "\"\n    \"";
  }
  return out + "\"";
}

}  // namespace irisc
