// A real AMDGPU code object for the code-object checks (tests/CMakeLists.txt builds it
// with clang-19 for gfx942 when clang-19 is installed): one kernel, and the launch
// contract as irisc embeds it, an exported NUL-terminated `iris_metadata`.
extern "C" __attribute__((global)) void k(int* p) { p[0] = 1; }
extern "C" __attribute__((device, used, visibility("default"))) const char iris_metadata[] = "{\"kernels\":[]}";
