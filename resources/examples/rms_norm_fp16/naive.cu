// rms_norm_fp16, naive: one thread per row. Each thread walks its own row twice (sum of squares,
// then scale), so the 32 threads of a warp touch 32 different rows per load: every load
// instruction needs 32 memory transactions, and the GPU has only B threads of work.
#include <kf/prelude.cuh>

extern "C" __global__ void rms_norm_naive(const __half* __restrict__ x, const __half* __restrict__ w,
                                          __half* __restrict__ y, int B, int D, float eps)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= B)
        return;
    const __half* xr = x + static_cast<size_t>(row) * D;
    __half* yr = y + static_cast<size_t>(row) * D;

    float sum_sq = 0.0f;
    for (int i = 0; i < D; ++i) {
        const float v = kf::to_float(xr[i]);
        sum_sq += v * v;
    }
    const float rstd = rsqrtf(sum_sq / D + eps);
    for (int i = 0; i < D; ++i)
        yr[i] = kf::from_float<__half>(kf::to_float(xr[i]) * rstd * kf::to_float(w[i]));
}
