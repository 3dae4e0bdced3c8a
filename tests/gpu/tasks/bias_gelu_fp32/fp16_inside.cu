// BROKEN ON PURPOSE (a precision downgrade): an fp32 task computed in fp16 inside. x, b, their
// sum and the result are each rounded to fp16 (about 3 decimal digits). Its error is hundreds of
// times LibTorch's fp32 error, so the golden reference's "no worse than LibTorch" allowance must
// not rescue it: verdict fail with mismatches on every shape but the smallest.
#include <cuda_fp16.h>

extern "C" __global__ void bias_gelu_in_half(const float* __restrict__ x, const float* __restrict__ b,
                                             float* __restrict__ y, long long n, long long cols)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const __half h = __hadd(__float2half(x[i]), __float2half(b[i % cols])); // BUG: fp16 math
        const float hf = __half2float(h);
        y[i] = __half2float(__float2half(0.5f * hf * (1.0f + erff(hf * 0.70710678118654752f))));
    }
}
