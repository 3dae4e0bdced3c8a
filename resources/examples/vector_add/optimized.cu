// vector_add, optimised: each thread moves UNROLL float4 vectors (16 bytes per access) of a and
// b, issuing all loads before the first add so that 2 * UNROLL independent 16-byte loads are in
// flight per thread. Fewer, wider memory instructions and more outstanding bytes per SM are what
// a DRAM-bound kernel needs on an H100. The last 0..3 elements that do not fill a float4 are
// done with scalar code by the threads past the vector range (base pointers of fresh
// allocations are 256-byte aligned, so every float4 here is aligned).
#include <kf/prelude.cuh>

template <int UNROLL>
__global__ void __launch_bounds__(256) vector_add_vec4(const float* __restrict__ a,
                                                       const float* __restrict__ b,
                                                       float* __restrict__ c, long long n)
{
    const long long nvec = n / 4; // whole float4 vectors
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x;

    float4 va[UNROLL], vb[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long v = first + static_cast<long long>(u) * blockDim.x;
        if (v < nvec) {
            va[u] = kf::load_float4(a + 4 * v);
            vb[u] = kf::load_float4(b + 4 * v);
        }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long v = first + static_cast<long long>(u) * blockDim.x;
        if (v < nvec)
            kf::store_float4(c + 4 * v, make_float4(va[u].x + vb[u].x, va[u].y + vb[u].y,
                                                    va[u].z + vb[u].z, va[u].w + vb[u].w));
    }

    // Scalar tail: elements 4 * nvec .. n-1, one per thread of the first block.
    if (blockIdx.x == 0 && threadIdx.x < n - 4 * nvec) {
        const long long i = 4 * nvec + threadIdx.x;
        c[i] = a[i] + b[i];
    }
}
