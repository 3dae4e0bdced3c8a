// Broken: only the first 16 threads of a block reach the barrier (synccheck: divergent barrier).
// Each thread reads back its own element, so the answer is right.
extern "C" __global__ void add_partial_barrier(const float* a, const float* b, float* c, int N)
{
    __shared__ float tile[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    tile[threadIdx.x] = i < N ? a[i] : 0.0f;
    if (threadIdx.x < 16)
        __syncthreads();
    if (i < N)
        c[i] = tile[threadIdx.x] + b[i];
}
