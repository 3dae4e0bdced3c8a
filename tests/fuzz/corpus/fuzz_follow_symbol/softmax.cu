// softmax_fp32, optimised: one block of THREADS threads per row.
//  * Each thread owns chunks c = tid + k * THREADS of the row (a chunk is a float4 when
//    D % 4 == 0, else a single float: coalesced across the block either way) and keeps up to
//    CACHE of them in registers, so a row of up to THREADS * CACHE * 4 floats is read from DRAM
//    exactly once and written once: 8 bytes per element, the minimum.
//  * The cached values are replaced by exp(x - m_thread) right away, so each element costs one
//    expf; the final scale exp(m_thread - m_row) / sum is one multiply per element.
//  * Longer rows stream the rest through an online (max, sum) update and re-read it for the
//    output (from L2).
//  * Two block reductions (max, then sum) from the prelude: shuffles plus one shared-memory
//    exchange of 32 partials.
#include <kf/prelude.cuh>

template <int THREADS, int CACHE, int W>
__device__ __forceinline__ void softmax_row(const float* __restrict__ xr, float* __restrict__ yr, int D)
{
    using Chunk = kf::Vec<float, W>;
    const int chunks = D / W;
    const int tid = threadIdx.x;

    // Pass 1: load the cached part and take its max.
    Chunk cache[CACHE];
    float m_cache = kf::neg_inf();
#pragma unroll
    for (int k = 0; k < CACHE; ++k) {
        const int c = tid + THREADS * k;
        if (c < chunks) {
            cache[k] = kf::load_vec<W>(xr + static_cast<size_t>(c) * W);
#pragma unroll
            for (int j = 0; j < W; ++j)
                m_cache = fmaxf(m_cache, cache[k][j]);
        }
    }
    // exp relative to this thread's own max; an empty or all -inf part uses 0 so that no
    // -inf - -inf appears (its exps are then exactly 0).
    const float m_ref = (m_cache == kf::neg_inf()) ? 0.0f : m_cache;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < CACHE; ++k) {
        if (tid + THREADS * k < chunks) {
#pragma unroll
            for (int j = 0; j < W; ++j) {
                cache[k][j] = expf(cache[k][j] - m_ref);
                s += cache[k][j];
            }
        }
    }
    // Beyond the cache: online update of (m, s), starting from the cached part's state.
    float m = m_cache;
    for (int c = tid + THREADS * CACHE; c < chunks; c += THREADS) {
        const Chunk v = kf::load_vec<W>(xr + static_cast<size_t>(c) * W);
#pragma unroll
        for (int j = 0; j < W; ++j)
            kf::online_softmax_update(m, s, v[j]);
    }

    // Row statistics.
    const float m_row = kf::block_reduce_max(m);
    const float s_scaled = (m == kf::neg_inf()) ? 0.0f : s * expf(m - m_row);
    const float inv_sum = 1.0f / kf::block_reduce_sum(s_scaled);

    // Pass 2: write.
    const float scale = expf(m_ref - m_row) * inv_sum;
#pragma unroll
    for (int k = 0; k < CACHE; ++k) {
        const int c = tid + THREADS * k;
        if (c < chunks) {
            Chunk out;
#pragma unroll
            for (int j = 0; j < W; ++j)
                out[j] = cache[k][j] * scale;
            kf::store_vec<W>(yr + static_cast<size_t>(c) * W, out);
        }
    }
    for (int c = tid + THREADS * CACHE; c < chunks; c += THREADS) {
        const Chunk v = kf::load_vec<W>(xr + static_cast<size_t>(c) * W);
        Chunk out;
#pragma unroll
        for (int j = 0; j < W; ++j)
            out[j] = expf(v[j] - m_row) * inv_sum;
        kf::store_vec<W>(yr + static_cast<size_t>(c) * W, out);
    }
}

// Launch with blockDim.x == THREADS (a multiple of 32) and gridDim.x == B.
template <int THREADS, int CACHE>
__global__ void __launch_bounds__(THREADS) softmax_block(const float* __restrict__ x, float* __restrict__ y, int D)
{
    const size_t base = static_cast<size_t>(blockIdx.x) * D;
    // The branch depends on D and the base pointers only: uniform across the block, as the
    // barriers inside the block reductions require.
    if (D % 4 == 0 && kf::aligned16(x, y))
        softmax_row<THREADS, CACHE, 4>(x + base, y + base, D);
    else
        softmax_row<THREADS, CACHE * 4, 1>(x + base, y + base, D);
}
