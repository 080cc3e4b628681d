// The vendor's spellings of the memory operations (arch/cuda/memory.hpp or
// arch/hip/memory.hpp), on a device compiler; memory/ builds on them.
#pragma once

#include "../arch.hpp"

#if IRIS_HIP_COMPILER
#include "hip/memory.hpp"
#elif IRIS_GPU_COMPILER
#include "cuda/memory.hpp"
#endif
