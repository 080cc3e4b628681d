// A tiny kernel built as a cubin and as a fatbin (see tests/CMakeLists.txt): real code
// objects for test_module_format.cpp to truncate and corrupt.
extern "C" __global__ void scale(float* x, float s) { x[threadIdx.x] *= s; }
