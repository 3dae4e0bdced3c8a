// layer_norm_bf16, naive: one block of 256 threads per row, scalar 2-byte loads, and a
// shared-memory tree reduction (8 barriers) for each of mean and variance. The row is read three
// times (mean, variance, output); later reads mostly hit L2, but every access is 2 bytes wide.
#include <kf/prelude.cuh>

// Sum of one value per thread across a block of 256 threads; the result is in every thread.
__device__ float block_sum_256(float v, float* partial)
{
    partial[threadIdx.x] = v;
    __syncthreads();
    for (int stride = 128; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    const float total = partial[0];
    __syncthreads(); // partial is reused by the next call
    return total;
}

// Launch with blockDim.x == 256 and one block per row.
extern "C" __global__ void layer_norm_naive(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                            const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ y,
                                            int D, float eps)
{
    __shared__ float partial[256];
    const __nv_bfloat16* xr = x + static_cast<size_t>(blockIdx.x) * D;
    __nv_bfloat16* yr = y + static_cast<size_t>(blockIdx.x) * D;

    float s = 0.0f;
    for (int i = threadIdx.x; i < D; i += blockDim.x)
        s += kf::to_float(xr[i]);
    const float mean = block_sum_256(s, partial) / D;

    float sq = 0.0f;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        const float d = kf::to_float(xr[i]) - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(block_sum_256(sq, partial) / D + eps);

    for (int i = threadIdx.x; i < D; i += blockDim.x)
        yr[i] = kf::from_float<__nv_bfloat16>((kf::to_float(xr[i]) - mean) * rstd * kf::to_float(w[i]) +
                                              kf::to_float(b[i]));
}
