k gemm
// gemm_fp16, optimised: tensor cores through WMMA, fed from shared memory.
//  * A block of WARPS_M x WARPS_N warps computes a BM x BN tile of C. The example plan uses
//    128 x 128 with 4 x 2 warps, so each warp owns 32 x 64 of it: 2 x 4 fragments of 16 x 16
//    accumulated in fp32 registers. Each element of A in shared memory is read by 2 warps and
//    each of B by 4, and each fragment feeds 4 (A) or 2 (B) tensor-core MMAs, instead of every
//    output re-reading its row and column from L2 as in the naive kernel.
//  * K is walked in BK = 32 slices, double-buffered: cp.async copies slice k+1 into shared
//    memory while the tensor cores work on slice k.
//  * Rows of the shared tiles are padded by 8 halves (16 bytes) so that the fragment loads of
//    a warp spread over all shared-memory banks.
//  * Tails: a 16-byte copy is used only when K % 8 == 0 (A) or N % 8 == 0 (B), i.e. when every
//    row start is 16-byte aligned; out-of-range parts of a tile are zero-filled (cp.async with
//    a source size of 0, or plain stores on the scalar path), so the MMA needs no bounds checks.
//    Results go through a per-warp shared staging tile and are stored with bounds checks,
//    16 bytes at a time where the row allows it.
// sm_80 and later (cp.async); the same code runs on sm_90, where wgmma would be faster still.
#include <kf/prelude.cuh>
#include <mma.h>

namespace {

__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid)
{
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int src_bytes = valid ? 16 : 0; // 0: nothing is read, the 16 bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory"); }

} // namespace

// Launch with 32 * WARPS_M * WARPS_N threads and grid (ceil_div(N, BN), ceil_div(M, BM)).
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(32 * WARPS_M * WARPS_N) gemm_wmma(const __half* __restrict__ A, const __half* __restrict__ B,
                                                 __half* __restrict__ C, int M, int N, int K)
{
    using namespace nvcuda;
    constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; // warp tile
    constexpr int FM = WM / 16, FN = WN / 16;          // fragments per warp
    constexpr int PAD = 8;                             // halves
    constexpr int LDA = BK + PAD, LDB = BN + PAD;
    static_assert(BM % (16 * WARPS_M) == 0 && BN % (16 * WARPS_N) == 0 && BK % 16 == 0, "tile shape");
    static_assert((BM * BK / 8) % THREADS == 0 && (BK * BN / 8) % THREADS == 0, "whole chunks per thread");

    __shared__ alignas(128) __half As[2][BM][LDA];
    __shared__ alignas(128) __half Bs[2][BK][LDB];
    __shared__ alignas(128) float Cs[THREADS / 32][16 * 16];

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    const bool a_vec = (K % 8 == 0) && kf::aligned16(A);
    const bool b_vec = (N % 8 == 0) && kf::aligned16(B);

    // Copies the K-slice starting at k0 into stage s (asynchronously where possible).
    auto load_tiles = [&](int s, int k0) {
#pragma unroll
        for (int i = 0; i < BM * BK / 8 / THREADS; ++i) {
            const int q = tid + i * THREADS;
            const int r = q / (BK / 8), c = (q % (BK / 8)) * 8;
            const int gm = m0 + r, gk = k0 + c;
            if (a_vec) {
                const bool ok = gm < M && gk < K; // K % 8 == 0: the whole chunk is in range
                cp_async_16(&As[s][r][c], ok ? A + static_cast<size_t>(gm) * K + gk : A, ok);
            } else {
#pragma unroll 1 // the misaligned path only; kept rolled so it does not cost registers
                for (int e = 0; e < 8; ++e)
                    As[s][r][c + e] = (gm < M && gk + e < K) ? A[static_cast<size_t>(gm) * K + gk + e]
                                                             : __float2half_rn(0.0f);
            }
        }
#pragma unroll
        for (int i = 0; i < BK * BN / 8 / THREADS; ++i) {
            const int q = tid + i * THREADS;
            const int r = q / (BN / 8), c = (q % (BN / 8)) * 8;
            const int gk = k0 + r, gn = n0 + c;
            if (b_vec) {
                const bool ok = gk < K && gn < N; // N % 8 == 0: the whole chunk is in range
                cp_async_16(&Bs[s][r][c], ok ? B + static_cast<size_t>(gk) * N + gn : B, ok);
            } else {
#pragma unroll 1
                for (int e = 0; e < 8; ++e)
                    Bs[s][r][c + e] = (gk < K && gn + e < N) ? B[static_cast<size_t>(gk) * N + gn + e]
                                                             : __float2half_rn(0.0f);
            }
        }
    };

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);

    const int k_tiles = (K + BK - 1) / BK;
    load_tiles(0, 0);
    cp_async_commit();

    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt & 1;
        if (kt + 1 < k_tiles)
            load_tiles(s ^ 1, (kt + 1) * BK); // stage s^1 was released by the barrier at the end of kt-1
        cp_async_commit();
        cp_async_wait<1>(); // everything but the group just committed has landed: slice kt
        __syncthreads();

#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag[FN];
#pragma unroll
            for (int i = 0; i < FM; ++i)
                wmma::load_matrix_sync(a_frag[i], &As[s][warp_m * WM + i * 16][kk], LDA);
#pragma unroll
            for (int j = 0; j < FN; ++j)
                wmma::load_matrix_sync(b_frag[j], &Bs[s][kk][warp_n * WN + j * 16], LDB);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
        }
        __syncthreads(); // everyone is done with stage s before it is refilled
    }

    // Epilogue: fragment -> per-warp staging tile -> fp16 with bounds checks.
    float* stage = Cs[warp];
    const int r = lane / 2, c = (lane % 2) * 8; // each lane writes 8 consecutive outputs
    const bool c_vec = (N % 8 == 0) && kf::aligned16(C);
#pragma unroll
    for (int i = 0; i < FM; ++i) {
#pragma unroll
        for (int j = 0; j < FN; ++j) {
            wmma::store_matrix_sync(stage, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int gm = m0 + warp_m * WM + i * 16 + r;
            const int gn = n0 + warp_n * WN + j * 16 + c;
            if (gm < M) {
                __half* dst = C + static_cast<size_t>(gm) * N + gn;
                if (c_vec && gn + 8 <= N) {
                    float v[8];
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        v[e] = stage[r * 16 + c + e];
                    kf::store_floats<8>(dst, v);
                } else {
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        if (gn + e < N)
                            dst[e] = kf::from_float<__half>(stage[r * 16 + c + e]);
                }
            }
            __syncwarp(); // the staging tile is overwritten by the next fragment
        }
    }
}
