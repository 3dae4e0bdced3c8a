#pragma once
// kf/row_cache.cuh — the register cache of a kernel with a warp per row (the examples
// rms_norm_fp16, fused_add_rms_norm_fp16 and layer_norm_bf16). Lane l owns chunks l, l + 32, ...
// of its row, W elements each (one 16-byte kf::load_vec when W is kf::vec16_size<T>(), so the
// warp's loads are coalesced). Its first CACHE chunks stay in registers between the passes over
// the row, so a row of up to 32 * CACHE chunks is read from DRAM once; the chunks beyond them are
// loaded again in every pass (from L1/L2 after the first).
//   kf::load_row_chunks<CACHE>(cache, src, chunks, lane, visit)   first pass: fills the cache
//   kf::for_each_row_chunk<CACHE>(cache, src, chunks, lane, visit)  later passes: reads it
// Both call visit(chunk, c) for every chunk c the lane owns, in order, with the chunk's values.

#include <kf/vec.cuh>

namespace kf {

/// Loads this lane's chunks of the row `src`, keeping the first CACHE in `cache`.
template <int CACHE, int W, typename T, typename Visit>
__device__ __forceinline__ void load_row_chunks(Vec<T, W> (&cache)[CACHE], const T* __restrict__ src, int chunks,
                                                int lane, Visit&& visit)
{
#pragma unroll
    for (int k = 0; k < CACHE; ++k) {
        const int c = lane + 32 * k;
        if (c < chunks) {
            cache[k] = load_vec<W>(src + static_cast<size_t>(c) * W);
            visit(cache[k], c);
        }
    }
    for (int c = lane + 32 * CACHE; c < chunks; c += 32) // beyond the register cache
        visit(load_vec<W>(src + static_cast<size_t>(c) * W), c);
}

/// This lane's chunks again: the first CACHE from `cache`, the rest loaded from `src` (the row
/// the cache holds, or the copy of it the kernel wrote).
template <int CACHE, int W, typename T, typename Visit>
__device__ __forceinline__ void for_each_row_chunk(const Vec<T, W> (&cache)[CACHE], const T* __restrict__ src,
                                                   int chunks, int lane, Visit&& visit)
{
#pragma unroll
    for (int k = 0; k < CACHE; ++k) {
        const int c = lane + 32 * k;
        if (c < chunks)
            visit(cache[k], c);
    }
    for (int c = lane + 32 * CACHE; c < chunks; c += 32)
        visit(load_vec<W>(src + static_cast<size_t>(c) * W), c);
}

} // namespace kf
