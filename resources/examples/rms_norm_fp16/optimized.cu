// rms_norm_fp16, optimised: one warp per row, WARPS rows per block.
//  * x is read from DRAM once: each lane keeps up to CACHE chunks of its part of the row in
//    registers between the sum of squares and the scaling pass (rows longer than
//    32 * CACHE chunks re-read the rest, which then comes from L1/L2).
//  * A chunk is one 16-byte load of 8 halves when every row start is aligned (D % 8 == 0);
//    otherwise the same code runs with 1-element chunks, still coalesced across the warp.
//  * The row sum is a 5-step shuffle butterfly: no shared memory, no __syncthreads, and a warp
//    that finishes its row never waits for the others.
#include <kf/prelude.cuh>
#include <kf/row_cache.cuh>

template <int W, int CACHE>
__device__ __forceinline__ void rms_norm_row(const __half* __restrict__ xr, const __half* __restrict__ w,
                                             __half* __restrict__ yr, int D, float eps, int lane)
{
    using Chunk = kf::Vec<__half, W>;
    const int chunks = D / W;

    Chunk cache[CACHE];
    float sum_sq = 0.0f;
    kf::load_row_chunks(cache, xr, chunks, lane, [&](const Chunk& xv, int) {
#pragma unroll
        for (int j = 0; j < W; ++j) {
            const float v = kf::to_float(xv[j]);
            sum_sq += v * v;
        }
    });

    sum_sq = kf::warp_reduce_sum(sum_sq);
    const float rstd = rsqrtf(sum_sq / D + eps);

    kf::for_each_row_chunk(cache, xr, chunks, lane, [&](const Chunk& xv, int c) {
        const Chunk wv = kf::load_vec<W>(w + c * W);
        Chunk out;
#pragma unroll
        for (int j = 0; j < W; ++j)
            out[j] = kf::from_float<__half>(kf::to_float(xv[j]) * rstd * kf::to_float(wv[j]));
        kf::store_vec<W>(yr + static_cast<size_t>(c) * W, out);
    });
}

// Launch with blockDim.x == 32 * WARPS and gridDim.x == ceil_div(B, WARPS).
template <int WARPS, int CACHE>
__global__ void __launch_bounds__(32 * WARPS) rms_norm_warp(const __half* __restrict__ x,
                                                            const __half* __restrict__ w,
                                                            __half* __restrict__ y, int B, int D, float eps)
{
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= B) // whole warps leave together; nothing below synchronises the block
        return;
    const int lane = threadIdx.x % 32;
    const __half* xr = x + static_cast<size_t>(row) * D;
    __half* yr = y + static_cast<size_t>(row) * D;

    constexpr int V = kf::vec16_size<__half>(); // 8
    if (D % V == 0 && kf::aligned16(x, w, y))
        rms_norm_row<V, CACHE>(xr, w, yr, D, eps, lane);
    else
        rms_norm_row<1, CACHE>(xr, w, yr, D, eps, lane);
}
