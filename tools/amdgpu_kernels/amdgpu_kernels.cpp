// iris_amdgpu_kernels: compiles one HIP source (libiris's own kernels,
// runtime/src/kernels/runtime_kernels.cu) for each AMD architecture with irisc's clang
// toolchain (compiler/toolchain/amdgpu.hpp: the same flags, embedded device headers and
// device libraries as generated kernels) and writes the code objects as one image set
// (runtime/src/kernels/amdgpu_images.hpp) for embedding in libiris.
//
//   iris_amdgpu_kernels OUT SOURCE ARCH...
//
// Without the AMD toolchain it writes an empty set and says so on stderr: libiris then
// has its own kernels for NVIDIA GPUs and the host backend only, and the hip backend
// says why. A compile error is a build error.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/toolchain/amdgpu.hpp"
#include "runtime/src/kernels/amdgpu_images.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: iris_amdgpu_kernels OUT SOURCE ARCH...\n");
    return 2;
  }
  const std::string out = argv[1], source = argv[2];
  std::vector<std::pair<std::string, std::string>> images;
  std::string why;
  if (!irisc::toolchain::amdgpu_toolchain_available(&why)) {
    std::fprintf(stderr, "iris_amdgpu_kernels: no AMD code objects of %s (%s)\n", source.c_str(), why.c_str());
  } else {
    std::ifstream in(source, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "iris_amdgpu_kernels: cannot read %s\n", source.c_str());
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    for (int i = 3; i < argc; ++i) {
      irisc::toolchain::AmdgpuCompileOptions o;
      o.arch = argv[i];
      o.want_assembly = false;
      const irisc::toolchain::AmdgpuCompileResult r = irisc::toolchain::compile_hip(text.str(), source, o);
      if (!r.ok) {
        std::fprintf(stderr, "iris_amdgpu_kernels: %s for %s:\n%s\n", source.c_str(), argv[i], r.log.c_str());
        return 1;
      }
      images.emplace_back(argv[i], std::string(reinterpret_cast<const char*>(r.code_object.data()), r.code_object.size()));
    }
  }
  const std::string set = images.empty() ? std::string() : iris::amdgpu_images::write(images);
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f << set;
  if (!f) {
    std::fprintf(stderr, "iris_amdgpu_kernels: cannot write %s\n", out.c_str());
    return 1;
  }
  return 0;
}
