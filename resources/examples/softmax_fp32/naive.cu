// softmax_fp32, naive: one thread per row, three passes over the row (max, sum of exp, write).
// The threads of a warp walk 32 different rows, so no load is coalesced, and the row is read
// three times.
#include <kf/prelude.cuh>

extern "C" __global__ void softmax_naive(const float* __restrict__ x, float* __restrict__ y, int B, int D)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= B)
        return;
    const float* xr = x + static_cast<size_t>(row) * D;
    float* yr = y + static_cast<size_t>(row) * D;

    float m = kf::neg_inf();
    for (int i = 0; i < D; ++i)
        m = fmaxf(m, xr[i]);
    float s = 0.0f;
    for (int i = 0; i < D; ++i)
        s += expf(xr[i] - m);
    for (int i = 0; i < D; ++i)
        yr[i] = expf(xr[i] - m) / s;
}
