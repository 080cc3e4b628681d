// A program outside the repository, linked against the installed iris::iris only: on
// every rank, k.iris's kernel writes src + bias into the next rank's dst, launched
// through the header iris_add_kernels generated and then through the JIT (from the
// copy of k.iris next to this binary), and a kernel whose type parameter the JIT sets.
// Exits 0 when every rank received what it should.
#include <cstdio>
#include <filesystem>
#include <string>

#include "iris/iris.hpp"
#include "k.iris.hpp"

namespace {

void expect_received(const iris::Tensor<float>& dst, float bias, const char* how) {
  const std::vector<float> got = dst.to_host();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != static_cast<float>(i) + bias) {
      throw iris::Error(std::string(how) + ": dst[" + std::to_string(i) + "] is " + std::to_string(got[i]) +
                        ", expected " + std::to_string(static_cast<float>(i) + bias));
    }
  }
}

}  // namespace

int main() {
  iris::Options options = iris::Options::from_env();
  if (options.ranks == 0) options.ranks = 2;
  options.heap_bytes = iris::Options::kHeapGranularity * 4;
  const std::filesystem::path kernel_copy = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "k.iris";
  const int rc = iris::run(options, [&](iris::Context& ctx) {
    constexpr std::size_t n = 4096;
    auto src = ctx.arange<float>(n);
    auto dst = ctx.zeros<float>(n);
    const std::int64_t to = (ctx.rank() + 1) % ctx.world();
    ctx.barrier();

    const iris_kernels::k::Kernels embedded(ctx);
    embedded.shift_add(dst, src, 1.5f, to);
    ctx.barrier();
    expect_received(dst, 1.5f, "embedded launch");

    iris::JitOptions jit;
    jit.use_cache = false;
    iris::Program program = iris::jit_program_file(ctx, kernel_copy, jit);
    program.launch("shift_add", {dst, src, 2.5f, to});
    ctx.barrier();
    expect_received(dst, 2.5f, "JIT launch");

    jit.types = {{"T", iris::DType::i32}};
    iris::Program typed = iris::jit_program_file(ctx, kernel_copy, jit);
    auto ints = ctx.zeros<std::int32_t>(n);
    typed.launch("fill_typed", {ints, 7.0f});
    if (ints.to_host().back() != 7) throw iris::Error("JIT launch with T = i32: the last element is not 7");
    if (ctx.rank() == 0) {
      std::printf("outside: %d ranks on the %s backend, embedded and JIT launches correct (a type parameter too)\n", ctx.world(),
                  ctx.on_host() ? "host" : "cuda");
    }
  });
  return rc;
}
