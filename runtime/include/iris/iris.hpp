// libiris: the runtime for multi-GPU kernels on a symmetric heap. Include this.
#pragma once

#include "iris/context.hpp"
#include "iris/dtype.hpp"
#include "iris/error.hpp"
#include "iris/jit.hpp"
#include "iris/log.hpp"
#include "iris/module.hpp"
#include "iris/options.hpp"
#include "iris/program.hpp"
#include "iris/size.hpp"
#include "iris/tensor.hpp"
#include "iris/tensor_map.hpp"
#include "iris/timing.hpp"
