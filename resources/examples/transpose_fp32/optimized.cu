// transpose_fp32, optimised: a block of TILE x ROWS threads moves a TILE x TILE tile through
// shared memory. It reads TILE consecutive floats of each x row (coalesced) into tile[r][c], and
// writes TILE consecutive floats of each y row from tile[c][r] (coalesced too). Reading a column
// of the tile would make all 32 lanes hit the same bank; padding each row to TILE + 1 floats puts
// consecutive rows in consecutive banks, so both shared-memory accesses are conflict-free.
// Each thread moves TILE / ROWS elements, which keeps several loads in flight per thread.

// Launch with block (TILE, ROWS) and grid (ceil_div(N, TILE), ceil_div(M, TILE)).
template <int TILE, int ROWS>
__global__ void __launch_bounds__(TILE * ROWS) transpose_tiled(const float* __restrict__ x, float* __restrict__ y,
                                                              int M, int N)
{
    static_assert(TILE % ROWS == 0, "each thread moves TILE / ROWS elements");
    __shared__ float tile[TILE][TILE + 1];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;

    // x[m0 + r][n0 + tx] -> tile[r][tx]
#pragma unroll
    for (int r = ty; r < TILE; r += ROWS) {
        const int m = m0 + r, n = n0 + tx;
        if (m < M && n < N)
            tile[r][tx] = x[static_cast<size_t>(m) * N + n];
    }
    __syncthreads();
    // y[n0 + r][m0 + tx] = x[m0 + tx][n0 + r] = tile[tx][r]
#pragma unroll
    for (int r = ty; r < TILE; r += ROWS) {
        const int n = n0 + r, m = m0 + tx;
        if (n < N && m < M)
            y[static_cast<size_t>(n) * M + m] = tile[tx][r];
    }
}
