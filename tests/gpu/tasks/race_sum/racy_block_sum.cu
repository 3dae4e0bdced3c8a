// BROKEN ON PURPOSE (shared-memory race). The textbook block reduction with every
// __syncthreads() left out: a thread reads s[tid + stride] while the warp that owns it may not
// have stored its partial sum yet (or the slot still holds a value from an earlier block on the
// same SM), and the compiler may keep s[tid] in a register between steps. Each launch gets a
// different, wrong row sum. Expected: verdict fail with mismatches and/or runs that disagree,
// and nothing else (every y[b] is written, no guard is touched, no input is modified).
template <int THREADS>
__global__ void __launch_bounds__(THREADS) racy_block_sum(const float* __restrict__ x, float* __restrict__ y, int D)
{
    __shared__ float s[THREADS];
    const float* row = x + static_cast<size_t>(blockIdx.x) * D;
    const int tid = threadIdx.x;

    float acc = 0.0f;
    for (int i = tid; i < D; i += THREADS)
        acc += row[i];
    s[tid] = acc;
    // BUG: missing __syncthreads() here ...
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        // BUG: ... and here
    }
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
