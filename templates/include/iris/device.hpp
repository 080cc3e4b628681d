// Everything a kernel needs to use the iris symmetric heap: include this one
// header from CUDA sources or NVRTC programs. Host code that only fills in a
// Context includes iris/device/context.hpp instead.
#pragma once

#include "device/arch.hpp"
#include "device/context.hpp"
#include "device/memory_model.hpp"
#include "device/rma.hpp"
#include "device/atomics.hpp"
#include "device/signal.hpp"
#include "device/tile.hpp"
#include "device/flagged.hpp"
