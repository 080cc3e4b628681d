// 06_message_passing: a producer/consumer pair per rank over flags. Block 0 produces
// messages for the next rank; block 1 consumes messages from the previous one.
#include "iris/device.hpp"

using namespace iris::device;

__device__ __forceinline__ unsigned pattern(int sender, unsigned round, unsigned long long i) {
  return (unsigned)sender * 1000003u + round * 7919u + (unsigned)i;
}

// inbox: symmetric [n] u32 written by the previous rank; ready: symmetric u64 flag the
// previous rank raises; ack: symmetric u64 flag the next rank raises once it has read.
extern "C" __global__ void ping_pong(const __grid_constant__ Context ctx, unsigned* inbox, unsigned* outbox, unsigned long long n,
                                     unsigned long long* ready, unsigned long long* ack, unsigned rounds,
                                     unsigned* errors) {
  const int next = (ctx.rank + 1) % ctx.world;
  const int prev = (ctx.rank + ctx.world - 1) % ctx.world;
  __shared__ unsigned bad;
  if (blockIdx.x == 0) {  // producer
    for (unsigned k = 1; k <= rounds; ++k) {
      for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) outbox[i] = pattern(ctx.rank, k, i);
      __syncthreads();
      block_put(ctx, inbox, outbox, n * sizeof(unsigned), next);
      __syncthreads();
      if (threadIdx.x == 0) {
        quiet();  // every thread's put is visible system-wide before the flag
        signal(ctx, ready, (unsigned long long)k, next);
        wait_until(ctx, ack, Cmp::ge, (unsigned long long)k);  // next rank has read round k
      }
      __syncthreads();
    }
  } else {  // consumer
    if (threadIdx.x == 0) bad = 0;
    for (unsigned k = 1; k <= rounds; ++k) {
      if (threadIdx.x == 0) wait_until(ctx, ready, Cmp::ge, (unsigned long long)k);
      __syncthreads();
      unsigned mine = 0;
      for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) mine += inbox[i] != pattern(prev, k, i);
      if (mine) atomicAdd(&bad, mine);
      __syncthreads();
      if (threadIdx.x == 0) signal(ctx, ack, (unsigned long long)k, prev);
    }
    __syncthreads();
    if (threadIdx.x == 0) *errors = bad;
  }
}
