// gemm_fp16, naive: one thread per element of C, a loop over K reading A and B from global
// memory (through L1/L2) with fp32 accumulation. Every A and B element is fetched M or N times
// and no tensor core is used.
#include <kf/prelude.cuh>

extern "C" __global__ void gemm_naive(const __half* __restrict__ A, const __half* __restrict__ B,
                                      __half* __restrict__ C, int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N)
        return;
    const __half* a = A + static_cast<size_t>(row) * K;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += kf::to_float(a[k]) * kf::to_float(B[static_cast<size_t>(k) * N + col]);
    C[static_cast<size_t>(row) * N + col] = kf::from_float<__half>(acc);
}
