// Module loading from every code-object format (fatbin, cubin, PTX; from memory and
// from a file), each followed by a launch whose result is checked.
#include <filesystem>
#include <fstream>

#include "gpu_harness.hpp"

IRIS_DECLARE_EMBEDDED(format_cubin)
IRIS_DECLARE_EMBEDDED(format_ptx)

namespace iris::test {
namespace {

class Formats : public GpuTest {};

void check_module(Context& ctx, Module m, CodeObjectFormat want) {
  require(m.format() == want, std::string("format of ") + m.name());
  auto out = ctx.zeros<std::int32_t>(1);
  ctx.launch(m.kernel("write_rank"), LaunchConfig{1, 32}, out.data());
  require(out.to_host()[0] == ctx.rank() * 100 + ctx.world(), std::string("kernel from ") + m.name());
}

TEST_P(Formats, CubinAndPtxFromMemoryAndFile) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    check_module(ctx, ctx.load_module(embedded::format_cubin(), "cubin"), CodeObjectFormat::cubin);
    check_module(ctx, ctx.load_module(embedded::format_ptx(), "ptx"), CodeObjectFormat::ptx);
    const auto dir = std::filesystem::temp_directory_path();
    for (auto [bytes, name, fmt] : {std::tuple{embedded::format_cubin(), "k.cubin", CodeObjectFormat::cubin},
                                    std::tuple{embedded::format_ptx(), "k.ptx", CodeObjectFormat::ptx},
                                    std::tuple{embedded::gpu_test_kernels(), "k.fatbin", CodeObjectFormat::fatbin}}) {
      const auto path = dir / ("iris_" + std::to_string(ctx.rank()) + "_" + name);
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                  static_cast<std::streamsize>(bytes.size()));
      Module m = ctx.load_module(path);
      std::filesystem::remove(path);
      if (fmt == CodeObjectFormat::fatbin) {
        require(m.format() == fmt, "fatbin from file");
        require(m.kernel("three_params").name() == "three_params", "fatbin kernel lookup");
      } else {
        check_module(ctx, std::move(m), fmt);
      }
    }
  });
}

IRIS_GPU_SUITE(Formats);

}  // namespace
}  // namespace iris::test
