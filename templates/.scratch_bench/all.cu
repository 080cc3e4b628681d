#include "all_kernel.cuh"
