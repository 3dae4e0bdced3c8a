// stream_copy, one-shot grid: every thread moves UNROLL float4 vectors exactly once (no grid-stride
// loop), issuing all loads before the first store, so UNROLL independent 16-byte loads are in
// flight per thread and the grid covers the whole vector in one wave of blocks. The same shape
// reached 91 % of DRAM peak in vector_add; a copy has one stream fewer to keep busy. The 0..3
// elements past the last whole float4 are copied by the first threads of block 0.
template <int UNROLL>
__global__ void __launch_bounds__(256) stream_copy_oneshot(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    const long long nvec = n / 4;
    const float4* __restrict__ xv = reinterpret_cast<const float4*>(x);
    float4* __restrict__ yv = reinterpret_cast<float4*>(y);
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x;
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long k = first + static_cast<long long>(u) * blockDim.x;
        if (k < nvec)
            v[u] = xv[k];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long k = first + static_cast<long long>(u) * blockDim.x;
        if (k < nvec)
            yv[k] = v[u];
    }
    if (blockIdx.x == 0 && threadIdx.x < n - 4 * nvec) {
        const long long i = 4 * nvec + threadIdx.x;
        y[i] = x[i];
    }
}
