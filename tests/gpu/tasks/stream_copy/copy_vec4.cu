// stream_copy: y = x with 16-byte accesses. A grid of at most 4224 blocks (32 per SM on a
// 132-SM H100, i.e. 4 full waves of 8 resident blocks) strides over the vectors; each step a
// thread issues UNROLL float4 loads before its stores, so 2 * 16 bytes per thread are in flight.
// __ldcs/__stcs mark the data as streamed (evict first): nothing is reused. The 0..3 elements
// past the last whole float4 are copied by the first threads of block 0. Fresh allocations are
// 256-byte aligned, so every float4 here is aligned.
template <int UNROLL>
__global__ void __launch_bounds__(256) stream_copy_vec4(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    const long long nvec = n / 4;
    const float4* __restrict__ xv = reinterpret_cast<const float4*>(x);
    float4* __restrict__ yv = reinterpret_cast<float4*>(y);
    const long long step = static_cast<long long>(gridDim.x) * blockDim.x * UNROLL;

    for (long long first = static_cast<long long>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x; first < nvec;
         first += step) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long k = first + static_cast<long long>(u) * blockDim.x;
            if (k < nvec)
                v[u] = __ldcs(xv + k);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long k = first + static_cast<long long>(u) * blockDim.x;
            if (k < nvec)
                __stcs(yv + k, v[u]);
        }
    }

    if (blockIdx.x == 0 && threadIdx.x < n - 4 * nvec) {
        const long long i = 4 * nvec + threadIdx.x;
        y[i] = x[i];
    }
}
