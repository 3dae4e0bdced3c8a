// layer_norm_bf16, optimised: one warp per row, WARPS rows per block.
//  * Chunks of 8 bf16 (one 16-byte load) when D % 8 == 0, else single elements; lane l owns
//    chunks l, l + 32, ... so every load instruction of the warp is coalesced.
//  * Up to CACHE chunks per lane stay in registers as packed bf16, so the row is read from DRAM
//    once; mean and variance are both computed from registers in two exact passes (variance of
//    x - mean, no E[x^2] - mean^2 cancellation). Longer rows re-read the rest from L1/L2.
//  * Both statistics are 5-step shuffle butterflies: no shared memory and no __syncthreads, so
//    a row costs a handful of instructions after its loads land. The naive block-per-row kernel
//    pays two barriers per tree level and, for rows of 1-4K elements, leaves most of its 256
//    threads with one or two elements of work.
#include <kf/prelude.cuh>
#include <kf/row_cache.cuh>

using bf16 = __nv_bfloat16;

template <int CACHE, int W>
__device__ __forceinline__ void layer_norm_row(const bf16* __restrict__ xr, const bf16* __restrict__ w,
                                               const bf16* __restrict__ b, bf16* __restrict__ yr, int D,
                                               float eps, int lane)
{
    using Chunk = kf::Vec<bf16, W>;
    const int chunks = D / W;

    Chunk cache[CACHE];
    float s = 0.0f;
    kf::load_row_chunks(cache, xr, chunks, lane, [&](const Chunk& v, int) {
#pragma unroll
        for (int j = 0; j < W; ++j)
            s += kf::to_float(v[j]);
    });
    const float mean = kf::warp_reduce_sum(s) / D;

    float sq = 0.0f;
    kf::for_each_row_chunk(cache, xr, chunks, lane, [&](const Chunk& v, int) {
#pragma unroll
        for (int j = 0; j < W; ++j) {
            const float d = kf::to_float(v[j]) - mean;
            sq += d * d;
        }
    });
    const float rstd = rsqrtf(kf::warp_reduce_sum(sq) / D + eps);

    kf::for_each_row_chunk(cache, xr, chunks, lane, [&](const Chunk& v, int c) {
        const Chunk wv = kf::load_vec<W>(w + c * W);
        const Chunk bv = kf::load_vec<W>(b + c * W);
        Chunk out;
#pragma unroll
        for (int j = 0; j < W; ++j)
            out[j] = kf::from_float<bf16>((kf::to_float(v[j]) - mean) * rstd * kf::to_float(wv[j]) +
                                          kf::to_float(bv[j]));
        kf::store_vec<W>(yr + static_cast<size_t>(c) * W, out);
    });
}

// Launch with blockDim.x == 32 * WARPS and gridDim.x == ceil_div(B, WARPS).
template <int WARPS, int CACHE>
__global__ void __launch_bounds__(32 * WARPS) layer_norm_warp(const bf16* __restrict__ x, const bf16* __restrict__ w,
                                                              const bf16* __restrict__ b, bf16* __restrict__ y,
                                                              int B, int D, float eps)
{
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= B) // whole warps leave together; nothing below synchronises the block
        return;
    const int lane = threadIdx.x % 32;
    const size_t base = static_cast<size_t>(row) * D;
    constexpr int V = kf::vec16_size<bf16>(); // 8
    if (D % V == 0 && kf::aligned16(x, w, b, y))
        layer_norm_row<CACHE, V>(x + base, w, b, y + base, D, eps, lane);
    else
        layer_norm_row<CACHE, 1>(x + base, w, b, y + base, D, eps, lane);
}
