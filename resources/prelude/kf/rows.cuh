#pragma once
// kf/rows.cuh — how a memory-bound kernel over the rows of a [rows, cols] tensor spreads them over
// threads, by row length. These are the schedules `kforge generate` writes (docs/generate.md);
// each is a knob of the generated candidate that `kforge tune` varies.
//   short rows        several rows per warp: a group of Lanes lanes per row (Lanes = 8 or 16),
//                     reduced with kf::warp_reduce_sum<Lanes> / warp_reduce_max<Lanes>
//   rows up to ~1k    a warp per row (Lanes = 32)
//   rows up to ~16k   a block per row, kf::block_reduce_*; each thread keeps its first chunks
//                     in registers between the passes over the row
//   longer rows       split: kf::row_segment cuts a row into segments, a block each, in two
//                     launches. The first stores each segment's statistics in a scratch buffer;
//                     the second merges its row's records in segment order (sums add, maxima
//                     take fmaxf, softmax pairs kf::online_softmax_merge: exact up to rounding)
//                     and writes its segment. The row streams twice; no cluster launch needed.
//   very many rows    persistent blocks: launch a few blocks per SM and loop over the rows with
//                     the grid's stride. On the warp path every lane of a warp must take the same
//                     turns (the shuffles need the whole warp): loop over the warp's first row,
//                     let lanes past the last row compute it again, and store nothing from them.
// Accesses are 16 bytes (kf::load_vec) when the tensors are aligned. A row whose length is not a
// multiple of the vector width starts anywhere: do the elements before its first 16-byte boundary
// and after its last whole chunk one at a time, and the chunks between them 16 bytes at a time.
// Count segments in chunks, not elements, so every segment starts on a boundary.

#include <kf/types.cuh>

namespace kf {

/// Chunks [begin, end) of a row.
struct ChunkRange {
    long long begin;
    long long end;
};

/// Segment `segment` of `segments` of a row of `chunks` chunks: ceil(chunks / segments) each, the
/// last ones shorter or empty.
__host__ __device__ __forceinline__ ChunkRange row_segment(long long chunks, long long segments, long long segment)
{
    const long long per = ceil_div(chunks, segments);
    const long long begin = segment * per < chunks ? segment * per : chunks;
    return {begin, begin + per < chunks ? begin + per : chunks};
}

} // namespace kf
