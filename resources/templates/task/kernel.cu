// A naive element-wise kernel: one thread per element. Make it correct first (Verify), then
// fast (Benchmark); keep this file as the baseline and add optimised candidates beside it.
#include <kf/prelude.cuh>

extern "C" __global__ void elementwise(const float* __restrict__ x, float* __restrict__ y,
                                       long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fmaxf(x[i], 0.0f);
}
