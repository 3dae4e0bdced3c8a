// race_sum control: the same shared-memory tree reduction as racy_block_sum.cu, with its
// barriers. Must pass.
template <int THREADS>
__global__ void __launch_bounds__(THREADS) block_sum(const float* __restrict__ x, float* __restrict__ y, int D)
{
    __shared__ float s[THREADS];
    const float* row = x + static_cast<size_t>(blockIdx.x) * D;
    const int tid = threadIdx.x;

    float acc = 0.0f;
    for (int i = tid; i < D; i += THREADS)
        acc += row[i];
    s[tid] = acc;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
