#include <kf/prelude.cuh>

// Sums one row per warp.
extern "C" __global__ void row_sum(const float* x, float* y, int n)
{
    float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;

    float s = kf::warp_reduce_sum(v);
    if (threadIdx.x == 0)
        y[blockIdx.x] = s;
}
