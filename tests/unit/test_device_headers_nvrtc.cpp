// Compiles the iris device headers with NVRTC, the way a JIT user of the
// library would: every public device function is instantiated for every
// supported order, scope, type and comparison and must compile (front end and
// ptxas) for each target architecture, and misuse must fail with the
// documented static_assert message. NVRTC is dlopen()ed, so that this test
// builds and links without the CUDA toolkit and skips where NVRTC is missing.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <nvrtc.h>  // declarations only: the library itself is dlopen()ed

#include <cstdlib>
#include <string>
#include <vector>

#if __has_include(<iris/device/context.hpp>)
#include <iris/device/context.hpp>
#define IRIS_TEST_HAVE_HOST_CONTEXT 1
#else
#define IRIS_TEST_HAVE_HOST_CONTEXT 0
#endif

#ifndef IRIS_TEMPLATES_INCLUDE_DIR
#error "define IRIS_TEMPLATES_INCLUDE_DIR to the directory that holds iris/device.hpp"
#endif

namespace {

// The NVRTC entry points this test uses, resolved from the dlopen()ed library.
struct Nvrtc {
  decltype(&nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&nvrtcCreateProgram) create_program = nullptr;
  decltype(&nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&nvrtcCompileProgram) compile_program = nullptr;
  decltype(&nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) get_cubin = nullptr;
  std::string load_error;  // why loading failed; empty when usable
};

template <class Fn>
bool resolve(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  return fn != nullptr;
}

Nvrtc load_nvrtc() {
  Nvrtc api;
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("IRIS_NVRTC_PATH")) candidates.emplace_back(path);
  candidates.emplace_back("libnvrtc.so");
  candidates.emplace_back("libnvrtc.so.13");
  candidates.emplace_back("/usr/local/cuda/lib64/libnvrtc.so");

  void* library = nullptr;
  std::string tried;
  for (const std::string& candidate : candidates) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
    const char* why = dlerror();
    tried += candidate + ": " + (why != nullptr ? why : "not found") + "; ";
  }
  if (library == nullptr) {
    api.load_error = "NVRTC not loadable (set IRIS_NVRTC_PATH): " + tried;
    return api;
  }
  const bool ok = resolve(library, "nvrtcGetErrorString", api.get_error_string) &&
                  resolve(library, "nvrtcCreateProgram", api.create_program) &&
                  resolve(library, "nvrtcDestroyProgram", api.destroy_program) &&
                  resolve(library, "nvrtcCompileProgram", api.compile_program) &&
                  resolve(library, "nvrtcGetProgramLogSize", api.get_program_log_size) &&
                  resolve(library, "nvrtcGetProgramLog", api.get_program_log) &&
                  resolve(library, "nvrtcGetCUBINSize", api.get_cubin_size) &&
                  resolve(library, "nvrtcGetCUBIN", api.get_cubin);
  if (!ok) api.load_error = "NVRTC library lacks an expected entry point";
  return api;
}

// Loaded once; the library stays mapped for the life of the test binary.
const Nvrtc& nvrtc() {
  static const Nvrtc api = load_nvrtc();
  return api;
}

struct Compilation {
  nvrtcResult result = NVRTC_SUCCESS;
  std::string log;
  std::vector<char> cubin;  // filled only for sm_* targets that compiled
};

Compilation compile(const std::string& source, const std::string& arch_option) {
  const Nvrtc& api = nvrtc();
  Compilation out;
  nvrtcProgram program = nullptr;
  out.result = api.create_program(&program, source.c_str(), "iris_device_test.cu", 0, nullptr,
                                  nullptr);
  if (out.result != NVRTC_SUCCESS) {
    out.log = std::string("nvrtcCreateProgram: ") + api.get_error_string(out.result);
    return out;
  }
  const std::string include = std::string("-I") + IRIS_TEMPLATES_INCLUDE_DIR;
  const char* options[] = {arch_option.c_str(), include.c_str(), "-std=c++17"};
  out.result = api.compile_program(program, 3, options);

  size_t log_size = 0;
  api.get_program_log_size(program, &log_size);
  out.log.assign(log_size, '\0');
  if (log_size > 0) api.get_program_log(program, out.log.data());

  if (out.result == NVRTC_SUCCESS) {
    size_t cubin_size = 0;
    if (api.get_cubin_size(program, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
      out.cubin.resize(cubin_size);
      api.get_cubin(program, out.cubin.data());
    }
  }
  api.destroy_program(&program);
  return out;
}

// Instantiates every public device function: each atomic for every Order x
// Scope x supported type, atomic loads/stores, signal/wait_until for every
// Cmp and SignalOp, element and block RMA, fences and quiet.
const char* const kEverythingSource = R"IRIS(
#include <iris/device.hpp>

using namespace iris::device;

struct Pod16 { float a, b, c, d; };

template <Order O, Scope S, class T>
__device__ void arith_ops(const Context& ctx, T* p, T v, int to, T* out) {
  out[0] = atomic_add<O, S>(ctx, p, v, to);
  out[1] = atomic_sub<O, S>(ctx, p, v, to);
  out[2] = atomic_xchg<O, S>(ctx, p, v, to);
  out[3] = atomic_cas<O, S>(ctx, p, v, out[0], to);
}

template <Order O, Scope S, class T>
__device__ void integer_ops(const Context& ctx, T* p, T v, int to, T* out) {
  arith_ops<O, S>(ctx, p, v, to, out);
  out[4] = atomic_and<O, S>(ctx, p, v, to);
  out[5] = atomic_or<O, S>(ctx, p, v, to);
  out[6] = atomic_xor<O, S>(ctx, p, v, to);
  out[7] = atomic_min<O, S>(ctx, p, v, to);
  out[8] = atomic_max<O, S>(ctx, p, v, to);
}

template <Scope S, class T>
__device__ void flag_ops(const Context& ctx, T* flag, T v, int to, T* out) {
  atomic_store<Order::relaxed, S>(flag, v);
  atomic_store<Order::release, S>(flag, v);
  out[0] = atomic_load<Order::relaxed, S>(flag);
  out[1] = atomic_load<Order::acquire, S>(flag);
  signal<Order::relaxed, S>(ctx, flag, v, to, SignalOp::set);
  signal<Order::relaxed, S>(ctx, flag, v, to, SignalOp::add);
  signal<Order::release, S>(ctx, flag, v, to, SignalOp::set);
  signal<Order::release, S>(ctx, flag, v, to, SignalOp::add);
  const Cmp cmps[] = {Cmp::eq, Cmp::ne, Cmp::gt, Cmp::ge, Cmp::lt, Cmp::le};
  for (int i = 0; i < 6; ++i) {
    out[2 + i] = wait_until<Order::relaxed, S>(flag, cmps[i], v);
    out[8 + i] = wait_until<Order::acquire, S>(flag, cmps[i], v);
  }
}

template <Scope S, class T>
__device__ void ops_for_scope(const Context& ctx, T* p, T v, int to, T* out) {
  if constexpr (detail::is_int_word_v<T>) {
    integer_ops<Order::relaxed, S>(ctx, p, v, to, out);
    integer_ops<Order::acquire, S>(ctx, p, v, to, out);
    integer_ops<Order::release, S>(ctx, p, v, to, out);
    integer_ops<Order::acq_rel, S>(ctx, p, v, to, out);
    flag_ops<S>(ctx, p, v, to, out);
  } else {
    arith_ops<Order::relaxed, S>(ctx, p, v, to, out);
    arith_ops<Order::acquire, S>(ctx, p, v, to, out);
    arith_ops<Order::release, S>(ctx, p, v, to, out);
    arith_ops<Order::acq_rel, S>(ctx, p, v, to, out);
  }
}

template <class T>
__device__ void all_ops(const Context& ctx, T* p, T v, int to, T* out) {
  ops_for_scope<Scope::block>(ctx, p, v, to, out);
  ops_for_scope<Scope::device>(ctx, p, v, to, out);
  ops_for_scope<Scope::system>(ctx, p, v, to, out);
  // Defaults: acq_rel/system atomics, release signal, acquire wait.
  out[0] = atomic_add(ctx, p, v, to);
  if constexpr (detail::is_int_word_v<T>) {
    signal(ctx, p, v, to);
    out[1] = wait_until(p, Cmp::ge, v);
    out[2] = atomic_load(p);
    atomic_store(p, v);
  }
}

extern "C" __global__ void iris_atomics(const __grid_constant__ Context ctx, char* heap, int to) {
  all_ops(ctx, reinterpret_cast<u32*>(heap), 1u, to, reinterpret_cast<u32*>(heap + 256));
  all_ops(ctx, reinterpret_cast<i32*>(heap), -1, to, reinterpret_cast<i32*>(heap + 256));
  all_ops(ctx, reinterpret_cast<u64*>(heap), 1ull, to, reinterpret_cast<u64*>(heap + 256));
  all_ops(ctx, reinterpret_cast<i64*>(heap), -1ll, to, reinterpret_cast<i64*>(heap + 256));
  all_ops(ctx, reinterpret_cast<unsigned long*>(heap), 1ul, to,
          reinterpret_cast<unsigned long*>(heap + 256));
  all_ops(ctx, reinterpret_cast<long*>(heap), -1l, to, reinterpret_cast<long*>(heap + 256));
  all_ops(ctx, reinterpret_cast<float*>(heap), 1.0f, to, reinterpret_cast<float*>(heap + 256));
  all_ops(ctx, reinterpret_cast<double*>(heap), 1.0, to, reinterpret_cast<double*>(heap + 256));
  fence<Scope::block>();
  fence<Scope::device>();
  fence<Scope::system>();
  fence();
  quiet();
}

template <class T>
__device__ void element_rma(const Context& ctx, T* sym, T* local, usize n, int peer) {
  store(ctx, sym, load(ctx, sym, peer), peer);
  get(ctx, local, sym, n, peer);
  put(ctx, sym, local, n, peer);
  copy(ctx, sym, sym + n, n, peer, ctx.rank);
}

extern "C" __global__ void iris_rma(const __grid_constant__ Context ctx, char* sym, char* local,
                                    usize bytes, int peer) {
  element_rma(ctx, reinterpret_cast<uint4*>(sym), reinterpret_cast<uint4*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<float4*>(sym), reinterpret_cast<float4*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<Pod16*>(sym), reinterpret_cast<Pod16*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<double*>(sym), reinterpret_cast<double*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<int*>(sym), reinterpret_cast<int*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<short*>(sym), reinterpret_cast<short*>(local), 4, peer);
  element_rma(ctx, sym, local, 4, peer);
  const usize slice = bytes / gridDim.x;
  block_put(ctx, sym + blockIdx.x * slice, local + blockIdx.x * slice, slice, peer);
  block_get(ctx, local + blockIdx.x * slice, sym + blockIdx.x * slice, slice, peer);
  block_copy(ctx, sym, sym + bytes, bytes, peer, ctx.rank);
  const char* csym = sym;
  (void)translate(ctx, csym, peer);
}

// A Context that is not __grid_constant__ must compile too (it is then
// copied to local memory, which costs speed only).
extern "C" __global__ void iris_plain_context(Context ctx, char* sym, const char* local,
                                              usize bytes, int peer) {
  block_put(ctx, sym, local, bytes, peer);
}
)IRIS";

std::string misuse_source(const std::string& body) {
  return "#include <iris/device.hpp>\n"
         "using namespace iris::device;\n"
         "extern \"C\" __global__ void misuse(const __grid_constant__ Context ctx, unsigned* flag, "
         "float* f) {\n" +
         body + "\n}\n";
}

class NvrtcDeviceHeaders : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!nvrtc().load_error.empty()) GTEST_SKIP() << nvrtc().load_error;
  }
};

TEST_P(NvrtcDeviceHeaders, CompilesEveryOperation) {
  const Compilation c = compile(kEverythingSource, GetParam());
  ASSERT_EQ(c.result, NVRTC_SUCCESS) << nvrtc().get_error_string(c.result) << "\n" << c.log;
  EXPECT_EQ(c.log.find("warning"), std::string::npos) << c.log;
  EXPECT_FALSE(c.cubin.empty()) << "nvrtcGetCUBIN returned nothing for " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Architectures, NvrtcDeviceHeaders,
                         testing::Values("--gpu-architecture=sm_80", "--gpu-architecture=sm_90",
                                         "-arch=sm_90a"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           const std::string option = info.param;
                           return option.substr(option.find("sm_"));
                         });

struct Misuse {
  const char* name;
  const char* body;
  const char* message;  // the static_assert text the log must contain
};

class NvrtcDeviceHeaderMisuse : public testing::TestWithParam<Misuse> {
 protected:
  void SetUp() override {
    if (!nvrtc().load_error.empty()) GTEST_SKIP() << nvrtc().load_error;
  }
};

TEST_P(NvrtcDeviceHeaderMisuse, FailsWithMessage) {
  const Compilation c = compile(misuse_source(GetParam().body), "--gpu-architecture=sm_90");
  EXPECT_NE(c.result, NVRTC_SUCCESS) << "misuse compiled:\n" << GetParam().body;
  EXPECT_NE(c.log.find(GetParam().message), std::string::npos) << c.log;
}

INSTANTIATE_TEST_SUITE_P(
    StaticAsserts, NvrtcDeviceHeaderMisuse,
    testing::Values(
        Misuse{"WaitRelease", "wait_until<Order::release>(flag, Cmp::eq, 1u);",
               "wait cannot have release ordering"},
        Misuse{"WaitAcqRel", "wait_until<Order::acq_rel>(flag, Cmp::eq, 1u);",
               "wait cannot have release ordering"},
        Misuse{"SignalAcquire", "signal<Order::acquire>(ctx, flag, 1u, 1);",
               "signal cannot have acquire ordering"},
        Misuse{"LoadRelease", "atomic_load<Order::release>(flag);",
               "atomic_load cannot have release ordering"},
        Misuse{"StoreAcquire", "atomic_store<Order::acquire>(flag, 1u);",
               "atomic_store cannot have acquire ordering"},
        Misuse{"FloatMin", "atomic_min(ctx, f, 1.0f, 1);",
               "atomic_min supports u32, i32, u64 and i64"},
        Misuse{"ShortAdd", "atomic_add(ctx, reinterpret_cast<short*>(flag), short(1), 1);",
               "atomic_add supports u32, i32, u64, i64, float and double"},
        Misuse{"OddSizeLoad",
               "struct Three { char c[3]; }; load(ctx, reinterpret_cast<Three*>(flag), 1);",
               "load needs a trivially copyable type of 1, 2, 4, 8 or 16 bytes"}),
    [](const testing::TestParamInfo<Misuse>& info) { return std::string(info.param.name); });

// The host half of the contract: context.hpp compiles as plain C++ (this
// file is host C++), and translate() is the same arithmetic on the host.
TEST(DeviceContextOnHost, TranslatesByOffset) {
#if IRIS_TEST_HAVE_HOST_CONTEXT
  using iris::device::Context;
  static char heap0[64];
  static char heap1[64];
  const Context ctx{0, 2, {heap0, heap1}};
  EXPECT_EQ(iris::device::translate(ctx, heap0 + 24, 1), heap1 + 24);
  const int* local = reinterpret_cast<const int*>(heap0 + 8);
  EXPECT_EQ(iris::device::translate(ctx, local, 1), reinterpret_cast<const int*>(heap1 + 8));
  EXPECT_EQ(iris::device::translate(ctx, heap0, 0), heap0);
#else
  GTEST_SKIP() << "templates/include is not on this test's host include path";
#endif
}

}  // namespace
