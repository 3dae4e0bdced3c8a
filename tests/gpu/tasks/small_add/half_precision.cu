// BROKEN ON PURPOSE (half precision where fp32 is required). Rounds both inputs to fp16, adds in
// fp16 and widens the result. On outputs of scale 1e-4 the error is ~3e-8 per element (fp16's
// spacing there is 2^-24): far inside a fixed atol of 1e-5, far outside atol * rms(reference) =
// 1e-5 * ~1.4e-4. Expected in small_add: verdict fail with mismatches on every shape; in
// small_add_fixed_atol (atol_mode "absolute"): pass, which is exactly why atol must scale.
#include <cuda_fp16.h>

extern "C" __global__ void add_in_half(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = __half2float(__hadd(__float2half(a[i]), __float2half(b[i]))); // BUG: fp16 math
}
