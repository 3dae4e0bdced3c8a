// CONTROL (must pass): y = gelu(x + b) in fp16, fused. The sum stays in fp32 (exact for two fp16
// values of similar scale) and the exact erf GELU runs in fp32, so the only fp16 rounding is the
// final one. LibTorch rounds x + b to fp16 first, so this kernel is *more* accurate than the
// reference it is compared with; judged against the float64 golden result it passes, and its
// report shows an error ratio below 1.
#include <cuda_fp16.h>

extern "C" __global__ void bias_gelu_fused(const __half* __restrict__ x, const __half* __restrict__ b,
                                           __half* __restrict__ y, long long n, long long cols)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const float h = __half2float(x[i]) + __half2float(b[i % cols]);
        const float g = 0.5f * h * (1.0f + erff(h * 0.70710678118654752f));
        y[i] = __float2half_rn(g);
    }
}
