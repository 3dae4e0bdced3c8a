// transpose_fp32, naive: one thread per element. A warp reads 32 consecutive floats of a row of
// x (one 128-byte line) but writes them to 32 different rows of y, M * 4 bytes apart: 32 partial
// line writes per instruction, so the write side moves many times the useful bytes.
// gridDim.y is capped at 65535 by the hardware, so rows are walked with a grid-stride loop.
extern "C" __global__ void transpose_naive(const float* __restrict__ x, float* __restrict__ y, int M, int N)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x; // column of x
    if (col >= N)
        return;
    for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M; row += gridDim.y * blockDim.y)
        y[static_cast<size_t>(col) * M + row] = x[static_cast<size_t>(row) * N + col];
}
