// Program: loading irisc code objects with their launch contract, checking arguments
// and launching by the contract (see iris/program.hpp). Everything that can be decided
// once (the contract's validity, where each size symbol is bound, the dtypes) is decided
// at load; a launch only compares, evaluates and packs (tensor maps included), allocating
// nothing unless it fails.
#include "iris/program.hpp"

#include <array>
#include <climits>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "compiler/contract/launch_contract.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"
#include "iris/tensor_map.hpp"
#include "launch/module_impl.hpp"

namespace iris {
namespace {

namespace contract = irisc::contract;

// Bounds that let a launch keep everything on the stack.
constexpr std::size_t kMaxArgs = 160;
constexpr std::size_t kMaxSizes = 64;

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dims_text(const contract::Kernel& k, const contract::Param& p) {
  std::string s = "[";
  for (std::size_t i = 0; i < p.dims.size(); ++i) s += (i ? ", " : "") + contract::to_string(p.dims[i], k.sizes);
  return s + "]";
}

// The runtime's dtype for a contract dtype (bool tensors have none: such a parameter
// accepts no tensor, and says so).
bool runtime_dtype(contract::DType t, DType* out) {
  switch (t) {
    case contract::DType::f32: *out = DType::f32; return true;
    case contract::DType::f16: *out = DType::f16; return true;
    case contract::DType::bf16: *out = DType::bf16; return true;
    case contract::DType::i32: *out = DType::i32; return true;
    case contract::DType::i64: *out = DType::i64; return true;
    case contract::DType::u32: *out = DType::u32; return true;
    case contract::DType::u64: *out = DType::u64; return true;
    case contract::DType::boolean: return false;
  }
  return false;
}

bool is_float(contract::DType t) {
  return t == contract::DType::f32 || t == contract::DType::f16 || t == contract::DType::bf16;
}

static_assert(sizeof(TensorMap) == contract::kTensorMapBytes && alignof(TensorMap) == contract::kTensorMapAlign,
              "a tensor map argument is the driver's CUtensorMap");

// The TMA descriptor of `arg` (a tensor the launch checked against the contract: 2-D,
// row-major, of the parameter's dtype) that `slot` asks for. encode_tensor_map keeps
// every map it made, so a launch with the same tensor again is a lookup, and the map
// stays where it is: the launch passes it by address.
void* tensor_map(const contract::Kernel& k, const contract::Arg& slot, const Arg& arg, const void* base = nullptr) {
  const auto shape = arg.shape();
  const TensorMapSpec spec = TensorMapSpec::matrix(arg.dtype(), base ? base : arg.ptr(), shape[0], shape[1], shape[1],
                                                   static_cast<std::uint32_t>(slot.box_rows),
                                                   static_cast<std::uint32_t>(slot.box_cols));
  try {
    return const_cast<TensorMap*>(&encode_tensor_map(spec));
  } catch (const Error& e) {
    const std::string what = slot.role == contract::MapRole::a            ? "A [M, K]"
                             : slot.role == contract::MapRole::a_gathered ? "A [M, K] (gathered from every rank)"
                             : slot.role == contract::MapRole::b_kn       ? "B [K, N]"
                                                                          : "B [N, K]";
    throw Error("parameter '" + k.params[static_cast<std::size_t>(slot.index)].name + "' of kernel '" + k.name +
                "' is the GEMM operand " + what + ", read through a TMA tensor map: " + e.what() +
                " (the sm_90a GEMM needs rows of a multiple of 16 bytes and 16-byte aligned tensors; a kernel "
                "compiled for sm_90 takes any shape: jit_program falls back to that by itself, and "
                "Program::set_fallback does it for a Program loaded from a code object)");
  }
}

}  // namespace

Arg Arg::device_buffer(void* ptr, DType dtype, Shape shape, std::size_t bytes) {
  Arg a;
  a.tensor_ = true;
  a.dtype_ = dtype;
  a.ptr_ = ptr;
  a.set_shape(shape);
  a.on_heap_ = false;
  a.bytes_ = bytes;
  return a;
}

Arg Arg::heap_buffer(void* ptr, DType dtype, Shape shape, std::size_t bytes) {
  Arg a = device_buffer(ptr, dtype, std::move(shape), bytes);
  a.on_heap_ = true;
  return a;
}

Program::Program() = default;
Program::~Program() = default;
Program::Program(const Program&) = default;
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(const Program&) = default;
Program& Program::operator=(Program&&) noexcept = default;

Program::Program(Context& ctx, std::span<const std::byte> code, const std::string& name) : ctx_(&ctx) {
  module_ = ctx.load_module(code, name);
  backend::Backend& bk = backend::active();
  const std::optional<backend::ModuleGlobal> g = bk.module_global(module_.impl_->handle, "iris_metadata");
  if (!g) {
    throw Error(name + " has no irisc metadata (iris_metadata): was it compiled by irisc? Load plain CUDA modules "
                "with Context::load_module");
  }
  std::string json(g->bytes, '\0');
  bk.copy_to_host(json.data(), g->ptr, g->bytes);
  while (!json.empty() && json.back() == '\0') json.pop_back();
  try {
    kernels_ = contract::read(json).kernels;
  } catch (const contract::Error& e) {
    throw Error(name + ": bad launch contract: " + e.what());
  }
  for (const contract::Kernel& k : kernels_) {
    ctx.trace_kernel(k.name);
    const std::string who = name + ": kernel '" + k.name + "'";
    if (k.args.size() > kMaxArgs) throw Error(who + " has more than " + std::to_string(kMaxArgs) + " arguments");
    if (k.sizes.size() > kMaxSizes) throw Error(who + " has more than " + std::to_string(kMaxSizes) + " size symbols");
    for (const contract::Arg& a : k.args) {
      if (a.kind == contract::ArgKind::context && a.bytes != static_cast<int>(sizeof(device::Context))) {
        throw Error(who + " expects a " + std::to_string(a.bytes) + "-byte context; this libiris passes " +
                    std::to_string(sizeof(device::Context)) + " (recompile the kernel with this irisc)");
      }
    }
    Prepared p;
    p.function = module_.kernel(k.symbol);
    bool uses_resident = false;
    auto note = [&](const contract::Expr& e) {
      for (const contract::ExprOp& o : e.ops) uses_resident = uses_resident || o.op == contract::Op::resident;
    };
    note(k.grid);
    for (const contract::Role& r : k.roles) note(r.programs);
    if (k.dynamic_shared_bytes > (48 << 10) && (uses_resident || !k.roles.empty() || k.cluster > 1)) {
      bk.set_max_dynamic_shared_bytes(p.function.handle(), static_cast<std::size_t>(k.dynamic_shared_bytes));
    }
    if (uses_resident || !k.roles.empty()) {
      const int per_sm = bk.resident_blocks_per_sm(p.function.handle(), k.threads,
                                                   static_cast<std::size_t>(k.dynamic_shared_bytes));
      if (uses_resident && per_sm < 1) {
        throw Error(who + ": not one program of " + std::to_string(k.threads) + " threads and " +
                    std::to_string(k.dynamic_shared_bytes) + " bytes of dynamic shared memory fits on a multiprocessor");
      }
      if (uses_resident) p.resident = per_sm;
      // Roles wait on each other (a consumer spins until a producer signals), so every
      // program must be resident at once: a waiting program that holds an SM while the
      // program it waits for cannot start would deadlock.
      if (!k.roles.empty()) p.co_resident = static_cast<std::int64_t>(per_sm) * ctx.multiprocessors();
    }
    if (k.cluster > 1) {
      // A persistent grid of clusters must be resident at once: a GPC whose SM count is
      // not a multiple of the cluster leaves SMs out, so the SM count is not the bound.
      p.clusters = bk.max_active_clusters(p.function.handle(), k.cluster, k.threads,
                                          static_cast<std::size_t>(k.dynamic_shared_bytes));
      if (p.clusters < 1) {
        throw Error(who + ": no cluster of " + std::to_string(k.cluster) + " programs of " + std::to_string(k.threads) +
                    " threads and " + std::to_string(k.dynamic_shared_bytes) +
                    " bytes of dynamic shared memory fits on this GPU");
      }
    }
    p.maps.resize(k.args.size());
    for (const contract::Arg& slot : k.args) p.has_maps = p.has_maps || slot.kind == contract::ArgKind::tensor_map;
    p.sizes.resize(k.sizes.size());
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      DType d = DType::f32;
      if (k.params[i].tensor && !runtime_dtype(k.params[i].dtype, &d)) {
        d = static_cast<DType>(-1);  // accepts no tensor
      }
      p.dtypes.push_back(d);
      for (std::size_t dim = 0; dim < k.params[i].dims.size(); ++dim) {
        const auto& ops = k.params[i].dims[dim].ops;
        if (ops.size() == 1 && ops[0].op == contract::Op::size) {
          SizeBinding& b = p.sizes[static_cast<std::size_t>(ops[0].value)];
          if (b.param < 0) b = {static_cast<int>(i), static_cast<int>(dim)};
        }
      }
    }
    prepared_.push_back(std::move(p));
  }
}

std::size_t Program::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < kernels_.size(); ++i) {
    if (kernels_[i].name == name) return i;
  }
  std::string have;
  for (const contract::Kernel& k : kernels_) have += (have.empty() ? "" : ", ") + k.name;
  throw Error("no kernel '" + name + "' in " + module_.name() + " (it has: " + have + ")");
}

const contract::Kernel& Program::kernel(const std::string& name) const { return kernels_[index_of(name)]; }

contract::Bindings Program::bindings(std::size_t index, std::span<const std::int64_t> sizes) const {
  return {sizes, ctx_->world(), ctx_->multiprocessors(), prepared_[index].resident};
}

unsigned Program::grid_for(std::size_t index, std::span<const std::int64_t> sizes) const {
  const contract::Kernel& k = kernels_[index];
  const contract::Bindings b = bindings(index, sizes);
  auto eval = [&](const contract::Expr& e, const std::string& what) {
    std::int64_t v = 0;
    const contract::EvalError err = contract::eval(e, b, &v);
    if (err != contract::EvalError::ok) {
      throw Error("kernel '" + k.name + "': " + what + " " + contract::to_string(e, k.sizes) + " " +
                  contract::describe(err));
    }
    return v;
  };
  std::int64_t grid = 0;
  if (k.roles.empty()) {
    grid = eval(k.grid, "the grid");
  } else {
    for (const contract::Role& r : k.roles) {
      const std::int64_t n = eval(r.programs, "the program count of role '" + r.name + "'");
      if (n < 1) {
        throw Error("kernel '" + k.name + "': role '" + r.name + "' gets " + std::to_string(n) + " programs on this GPU (" +
                    std::to_string(ctx_->multiprocessors()) + " SMs)");
      }
      if (__builtin_add_overflow(grid, n, &grid)) grid = INT64_MAX;
    }
    const std::int64_t fit = prepared_[index].co_resident;
    if (fit > 0 && grid > fit) {
      std::string counts;
      for (const contract::Role& r : k.roles) {
        counts += (counts.empty() ? "" : ", ") + r.name + ": " +
                  std::to_string(eval(r.programs, "the program count of role '" + r.name + "'"));
      }
      throw Error("kernel '" + k.name + "': its roles wait on each other, so all " + std::to_string(grid) +
                  " programs (" + counts + ") must run at once, but this GPU holds " + std::to_string(fit) + " (" +
                  std::to_string(ctx_->multiprocessors()) + " SMs x " +
                  std::to_string(fit / std::max(1, ctx_->multiprocessors())) + " programs of " +
                  std::to_string(k.threads) + " threads); lower the role program counts (for example to sms or "
                  "resident) so that they fit, or a waiting program would hold an SM the program it waits for "
                  "needs");
    }
  }
  if (k.cluster > 1) {  // whole clusters, no more than run at once
    grid = std::min<std::int64_t>(grid, prepared_[index].clusters * k.cluster);
    grid = std::max<std::int64_t>(grid / k.cluster * k.cluster, k.cluster);
  }
  if (grid < 1) grid = 1;
  if (grid > 0x7fffffff) {
    throw Error("kernel '" + k.name + "': grid of " + std::to_string(grid) + " programs is too large");
  }
  return static_cast<unsigned>(grid);
}

unsigned Program::grid_size(const std::string& name, const std::map<std::string, std::int64_t>& sizes) const {
  const std::size_t index = index_of(name);
  const contract::Kernel& k = kernels_[index];
  std::vector<std::int64_t> values(k.sizes.size(), 0);
  for (std::size_t s = 0; s < k.sizes.size(); ++s) {
    auto it = sizes.find(k.sizes[s]);
    if (it == sizes.end()) throw Error("kernel '" + name + "': no value for size '" + k.sizes[s] + "'");
    values[s] = it->second;
  }
  return grid_for(index, values);
}

void Program::launch(const std::string& name, std::initializer_list<Arg> args, Stream stream) const {
  launch(name, std::span<const Arg>(args.begin(), args.size()), stream);
}

struct Program::Fallback {
  std::function<Program()> make;
  std::unique_ptr<Program> program;
  std::vector<char> noted, used;  // per kernel of this Program
};

void Program::set_fallback(std::function<Program()> make) {
  fallback_ = std::make_shared<Fallback>();
  fallback_->make = std::move(make);
  fallback_->noted.assign(kernels_.size(), 0);
  fallback_->used.assign(kernels_.size(), 0);
}

bool Program::fell_back(const std::string& name) const {
  return fallback_ && fallback_->used[index_of(name)] != 0;
}

std::string Program::map_problem(std::size_t index, const Arg* a) const {
  const contract::Kernel& k = kernels_[index];
  const Prepared& prep = prepared_[index];
  for (std::size_t n = 0; n < k.args.size(); ++n) {
    const contract::Arg& slot = k.args[n];
    // The epilogue's maps need no fallback: without them it stores from its threads.
    if (slot.kind != contract::ArgKind::tensor_map || contract::stored_through(slot.role)) continue;
    const Arg& arg = a[static_cast<std::size_t>(slot.index)];
    const auto shape = arg.shape();
    const Prepared::MapMemo& memo = prep.maps[n];
    if (memo.map != nullptr && memo.ptr == arg.ptr() && memo.rows == shape[0] && memo.cols == shape[1]) continue;
    const int bases = slot.role == contract::MapRole::a_gathered ? ctx_->world() : 1;
    for (int r = 0; r < bases; ++r) {
      const void* base = slot.role == contract::MapRole::a_gathered ? ctx_->translate(arg.ptr(), r) : arg.ptr();
      const std::string why = tensor_map_problem(TensorMapSpec::matrix(
          arg.dtype(), base, shape[0], shape[1], shape[1], static_cast<std::uint32_t>(slot.box_rows),
          static_cast<std::uint32_t>(slot.box_cols)));
      if (!why.empty()) return "parameter '" + k.params[static_cast<std::size_t>(slot.index)].name + "': " + why;
    }
  }
  return "";
}

void Program::launch(const std::string& name, std::span<const Arg> args, Stream stream) const {
  const std::size_t index = index_of(name);
  const contract::Kernel& k = kernels_[index];
  const Prepared& prep = prepared_[index];
  auto who = [&] { return "kernel '" + name + "'"; };
  auto prm = [&](std::size_t i) { return "parameter '" + k.params[i].name + "' of " + who(); };
  if (args.size() != k.params.size()) {
    std::string names;
    for (const contract::Param& p : k.params) names += (names.empty() ? "" : ", ") + p.name;
    throw Error(who() + " takes " + std::to_string(k.params.size()) + " argument(s) (" + names + ") but " +
                std::to_string(args.size()) + " were given");
  }
  const Arg* a = args.data();
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const contract::Param& p = k.params[i];
    const Arg& arg = a[i];
    if (p.tensor != arg.is_tensor()) {
      throw Error(prm(i) + " is a " + (p.tensor ? "tensor" : "scalar") + " but a " +
                  (arg.is_tensor() ? "tensor" : "scalar") + " was passed");
    }
    if (!p.tensor) {
      if (!is_float(p.dtype) && arg.is_float()) {
        throw Error(prm(i) + " is an integer (" + contract::name(p.dtype) + ") but a floating value was passed");
      }
      continue;
    }
    if (arg.dtype() != prep.dtypes[i]) {
      throw Error(prm(i) + " is a tensor of " + contract::name(p.dtype) + " but a tensor of " +
                  std::string(dtype_name(arg.dtype())) + " was passed");
    }
    if (arg.on_heap() && !ctx_->in_heap(arg.ptr(), arg.bytes())) {
      throw Error(prm(i) + ": the heap buffer passed (Arg::heap_buffer, " + std::to_string(arg.bytes()) + " bytes) " +
                  (ctx_->in_heap(arg.ptr()) ? "runs past the end of the symmetric heap"
                                            : "does not start in this rank's symmetric heap") +
                  "; a heap buffer must lie inside it");
    }
    if (p.symmetric && !(arg.on_heap() && ctx_->in_heap(arg.ptr()))) {
      throw Error(prm(i) + " must be a symmetric tensor (allocated on the heap with ctx.empty/zeros/...), but this "
                           "buffer is not on the symmetric heap");
    }
    if (arg.rank() > Arg::kMaxDims) {
      throw Error(prm(i) + ": the tensor passed has " + std::to_string(arg.rank()) + " dimensions; launches take at most " +
                  std::to_string(Arg::kMaxDims));
    }
    if (arg.shape().size() != p.dims.size()) {
      throw Error(prm(i) + " has " + std::to_string(p.dims.size()) + " dimension(s) " + dims_text(k, p) +
                  " but the tensor passed has shape " + shape_text(arg.shape()));
    }
    // The kernel addresses every element of the shape: it must lie inside the buffer.
    std::size_t need = dtype_size(arg.dtype());  // the parameter's, checked above
    bool overflow = false;
    for (std::int64_t d : arg.shape()) {
      overflow = overflow || d < 0 || __builtin_mul_overflow(need, static_cast<std::size_t>(d), &need);
    }
    if (overflow || need > arg.bytes()) {
      throw Error(prm(i) + ": the tensor passed has shape " + shape_text(arg.shape()) + ", which " +
                  (overflow ? std::string("overflows 64-bit byte counts")
                            : "needs " + std::to_string(need) + " bytes, but its buffer has " + std::to_string(arg.bytes())));
    }
  }
  // Size symbols from the tensors that name them, then every extent checked.
  std::array<std::int64_t, kMaxSizes> sizes{};
  for (std::size_t s = 0; s < prep.sizes.size(); ++s) {
    const SizeBinding& b = prep.sizes[s];
    sizes[s] = a[b.param].shape()[static_cast<std::size_t>(b.dim)];
  }
  const std::span<const std::int64_t> bound(sizes.data(), prep.sizes.size());
  const contract::Bindings bound_values = bindings(index, bound);
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const contract::Param& p = k.params[i];
    for (std::size_t d = 0; d < p.dims.size(); ++d) {
      std::int64_t want = 0;
      const contract::EvalError err = contract::eval(p.dims[d], bound_values, &want);
      const std::int64_t have = a[i].shape()[d];
      if (err == contract::EvalError::ok && have == want) continue;
      const std::string text = contract::to_string(p.dims[d], k.sizes);
      if (err != contract::EvalError::ok) {
        throw Error(prm(i) + ": its extent " + text + " in dimension " + std::to_string(d) + " " +
                    contract::describe(err) + " with the tensors passed");
      }
      std::string why = " (" + text + " = " + std::to_string(want);
      const auto& ops = p.dims[d].ops;
      if (ops.size() == 1 && ops[0].op == contract::Op::size) {
        const SizeBinding& b = prep.sizes[static_cast<std::size_t>(ops[0].value)];
        if (b.param != static_cast<int>(i)) why += " from '" + k.params[static_cast<std::size_t>(b.param)].name + "'";
      }
      throw Error("parameter '" + p.name + "' of " + who() + " has shape " + dims_text(k, p) + " = " +
                  std::to_string(want) + " in dimension " + std::to_string(d) + why + "), but the tensor passed has " +
                  shape_text(a[i].shape()));
    }
  }

  // A GEMM operand TMA cannot read: the fallback's kernel, where there is one (else
  // tensor_map() below says what is wrong).
  if (fallback_ && prep.has_maps) {
    const std::string why = map_problem(index, a);
    fallback_->used[index] = !why.empty();
    if (!why.empty()) {
      if (!fallback_->program) {
        // Compiling and loading it is no work a CUDA graph can capture.
        if (ctx_->capturing(stream)) {
          throw Error(who() + " needs its fallback lowering (" + why +
                      " for the sm_90a GEMM's TMA loads), which is compiled and loaded on first use, and this "
                      "launch is being captured into a CUDA graph: launch it once with such operands before the "
                      "capture");
        }
        fallback_->program = std::make_unique<Program>(fallback_->make());
      }
      if (!fallback_->noted[index]) {
        fallback_->noted[index] = 1;
        log(LogLevel::info, who() + " runs its fallback lowering (compiled for sm_90: mma.sync, at its speed), as " +
                                why + " for the sm_90a GEMM's TMA loads");
      }
      fallback_->program->launch(name, args, stream);
      return;
    }
  }
  // Pack in the contract's order.
  std::array<std::array<unsigned char, 8>, kMaxArgs> storage;
  std::array<void*, kMaxArgs> ptrs;
  std::array<std::size_t, kMaxArgs> arg_sizes;
  const std::int64_t sms = ctx_->multiprocessors();
  // The maps the GEMM's epilogue stores its tiles through (roles c, c_every_rank: the
  // tensor on this rank, or on every rank at its address here), or zeros where a map
  // cannot describe the tensor: the epilogue then stores from its threads, which any
  // tensor takes.
  const auto epilogue_maps = [&](const contract::Arg& slot, const Arg& arg) {
    std::vector<unsigned char> bytes(static_cast<std::size_t>(slot.bytes), 0);
    const auto shape = arg.shape();
    const int ranks = slot.role == contract::MapRole::c_every_rank ? ctx_->world() : 1;
    for (int r = 0; r < ranks; ++r) {
      const void* base = slot.role == contract::MapRole::c_every_rank ? ctx_->translate(arg.ptr(), r) : arg.ptr();
      const TensorMapSpec spec = TensorMapSpec::matrix(arg.dtype(), base, shape[0], shape[1], shape[1],
                                                       static_cast<std::uint32_t>(slot.box_rows),
                                                       static_cast<std::uint32_t>(slot.box_cols));
      if (!tensor_map_problem(spec).empty()) return std::vector<unsigned char>(bytes.size(), 0);
      std::memcpy(bytes.data() + static_cast<std::size_t>(r) * sizeof(TensorMap), &encode_tensor_map(spec),
                  sizeof(TensorMap));
    }
    return bytes;
  };
  for (std::size_t n = 0; n < k.args.size(); ++n) {
    const contract::Arg& slot = k.args[n];
    unsigned char* out = storage[n].data();
    ptrs[n] = out;
    arg_sizes[n] = static_cast<std::size_t>(slot.bytes);
    switch (slot.kind) {
      case contract::ArgKind::context:
        ptrs[n] = const_cast<device::Context*>(&ctx_->device_context());
        break;
      case contract::ArgKind::size: std::memcpy(out, &sizes[static_cast<std::size_t>(slot.index)], 8); break;
      case contract::ArgKind::sms: std::memcpy(out, &sms, 8); break;
      case contract::ArgKind::tensor_map: {
        const Arg& arg = a[static_cast<std::size_t>(slot.index)];
        Prepared::MapMemo& memo = prepared_[index].maps[n];
        const auto shape = arg.shape();
        if (memo.map == nullptr || memo.ptr != arg.ptr() || memo.rows != shape[0] || memo.cols != shape[1]) {
          if (contract::stored_through(slot.role)) {
            memo = {arg.ptr(), shape[0], shape[1], nullptr, epilogue_maps(slot, arg)};
            memo.map = memo.every_rank.data();
          } else if (slot.role == contract::MapRole::a_gathered) {
            // The tensor on every rank, at its address in this process (a heap tensor:
            // the launch checked that).
            std::vector<unsigned char> bytes(static_cast<std::size_t>(slot.bytes), 0);
            for (int r = 0; r < ctx_->world(); ++r) {
              std::memcpy(bytes.data() + static_cast<std::size_t>(r) * sizeof(TensorMap),
                          tensor_map(k, slot, arg, ctx_->translate(arg.ptr(), r)), sizeof(TensorMap));
            }
            memo = {arg.ptr(), shape[0], shape[1], nullptr, std::move(bytes)};
            memo.map = memo.every_rank.data();
          } else {
            memo = {arg.ptr(), shape[0], shape[1], tensor_map(k, slot, arg), {}};
          }
        }
        ptrs[n] = memo.map;
        break;
      }
      case contract::ArgKind::param: {
        const std::size_t i = static_cast<std::size_t>(slot.index);
        const Arg& arg = a[i];
        if (k.params[i].tensor) {
          void* ptr = arg.ptr();
          std::memcpy(out, &ptr, 8);
          break;
        }
        switch (k.params[i].dtype) {
          case contract::DType::f32: {
            const float f = static_cast<float>(arg.float_value());
            std::memcpy(out, &f, 4);
            break;
          }
          case contract::DType::f16: {
            const std::uint16_t h = half(static_cast<float>(arg.float_value())).bits;
            std::memcpy(out, &h, 2);
            break;
          }
          case contract::DType::bf16: {
            const std::uint16_t h = bfloat16(static_cast<float>(arg.float_value())).bits;
            std::memcpy(out, &h, 2);
            break;
          }
          case contract::DType::i32:
          case contract::DType::u32: {
            const std::int64_t v = arg.int_value();
            const bool i32 = k.params[i].dtype == contract::DType::i32;
            if (i32 ? (v < INT32_MIN || v > INT32_MAX) : (v < 0 || v > UINT32_MAX)) {
              throw Error(prm(i) + " is " + contract::name(k.params[i].dtype) + "; " + std::to_string(v) +
                          " does not fit");
            }
            const std::uint32_t u = static_cast<std::uint32_t>(v);
            std::memcpy(out, &u, 4);
            break;
          }
          case contract::DType::boolean: {
            const unsigned char b = arg.int_value() != 0;
            std::memcpy(out, &b, 1);
            break;
          }
          case contract::DType::i64:
          case contract::DType::u64: {
            const std::int64_t v = arg.int_value();
            std::memcpy(out, &v, 8);
            break;
          }
        }
        break;
      }
    }
  }
  LaunchConfig cfg{grid_for(index, bound), static_cast<unsigned>(k.threads)};
  cfg.shared_bytes = static_cast<std::size_t>(k.dynamic_shared_bytes);
  cfg.stream = stream;
  ctx_->launch_raw(prep.function, cfg, ptrs.data(), arg_sizes.data(), k.args.size());
}

}  // namespace iris
