// BROKEN ON PURPOSE (state in a __device__ global). Counts completed launches in a global that
// lives as long as the loaded module, and from the second launch on adds 1 to every element.
// A harness that loads the module once and launches once per request never sees it; the "run
// twice" rule (each trial runs the candidate twice) does. Expected: verdict fail, with runs that
// disagree and/or mismatches.
//
// The launch number is read by every block before any block can bump it: the last block to
// finish (counted in g_blocks_done) is the one that increments g_launches, so all blocks of one
// launch agree on which launch they are in.
__device__ unsigned int g_launches = 0;    // launches completed since the module was loaded
__device__ unsigned int g_blocks_done = 0; // blocks finished in the current launch

extern "C" __global__ void add_stateful(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, long long n)
{
    __shared__ unsigned int launch;
    if (threadIdx.x == 0)
        launch = atomicAdd(&g_launches, 0u); // an atomic read
    __syncthreads();

    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i] + (launch == 0 ? 0.0f : 1.0f); // BUG: wrong from the second launch on

    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&g_blocks_done, 1u) == gridDim.x - 1) { // the last block of this launch
            atomicExch(&g_blocks_done, 0u);
            atomicAdd(&g_launches, 1u);
        }
    }
}
