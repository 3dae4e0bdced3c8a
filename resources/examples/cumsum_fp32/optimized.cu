// cumsum_fp32, optimised: one warp per row, the row walked in tiles of 32 chunks.
//  * A chunk is a float4 (16-byte load) when D % 4 == 0, else one float; lane l owns chunk l of
//    the tile, so loads and stores are coalesced.
//  * Within a tile: each lane scans its own chunk sequentially, kf::warp_inclusive_sum scans the
//    32 chunk totals (5 shuffle steps), and the lane adds the exclusive prefix plus the running
//    carry of all earlier tiles. The carry is the last lane's inclusive total, broadcast by one
//    shuffle.
//  * UNROLL tiles are loaded before the first is scanned, so a lane has UNROLL independent
//    16-byte loads in flight while the scan's serial dependency runs.
#include <kf/prelude.cuh>

template <int W, int UNROLL>
__device__ __forceinline__ void cumsum_row(const float* __restrict__ xr, float* __restrict__ yr, int D, int lane)
{
    using Chunk = kf::Vec<float, W>;
    const int chunks = D / W;
    float carry = 0.0f;

    for (int base = 0; base < chunks; base += 32 * UNROLL) {
        Chunk v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int c = base + 32 * u + lane;
            if (c < chunks) {
                v[u] = kf::load_vec<W>(xr + static_cast<size_t>(c) * W);
            } else {
#pragma unroll
                for (int j = 0; j < W; ++j)
                    v[u][j] = 0.0f; // past the end: contributes nothing to the carry
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
            for (int j = 1; j < W; ++j)
                v[u][j] += v[u][j - 1];
            const float inclusive = kf::warp_inclusive_sum(v[u][W - 1]);
            const float exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
            const float offset = carry + (lane == 0 ? 0.0f : exclusive);
            const int c = base + 32 * u + lane;
            if (c < chunks) {
                Chunk out;
#pragma unroll
                for (int j = 0; j < W; ++j)
                    out[j] = v[u][j] + offset;
                kf::store_vec<W>(yr + static_cast<size_t>(c) * W, out);
            }
            carry += __shfl_sync(0xffffffffu, inclusive, 31);
        }
    }
}

// Launch with blockDim.x == 32 * WARPS and gridDim.x == ceil_div(B, WARPS).
template <int WARPS, int UNROLL>
__global__ void __launch_bounds__(32 * WARPS) cumsum_warp(const float* __restrict__ x, float* __restrict__ y,
                                                          int B, int D)
{
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= B) // whole warps leave; the shuffles below only involve the warp's own lanes
        return;
    const int lane = threadIdx.x % 32;
    const size_t base = static_cast<size_t>(row) * D;
    if (D % 4 == 0 && kf::aligned16(x, y))
        cumsum_row<4, UNROLL>(x + base, y + base, D, lane);
    else
        cumsum_row<1, UNROLL>(x + base, y + base, D, lane);
}
