// Everything a kernel needs to use the iris symmetric heap: include this one
// header from CUDA sources or NVRTC programs. Host code that only fills in a
// Context includes iris/device/context.hpp instead.
#pragma once

#include "device/arch.hpp"
#include "device/context.hpp"
#include "device/memory/model.hpp"
#include "device/memory/rma.hpp"
#include "device/memory/atomics.hpp"
#include "device/memory/signal.hpp"
#include "device/tile/tile.hpp"
#include "device/memory/flagged.hpp"
#include "device/memory/slots.hpp"
