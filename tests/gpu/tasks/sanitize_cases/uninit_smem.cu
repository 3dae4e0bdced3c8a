// Broken: half the threads fill the tile and every thread reads the element 128 places on, which
// for half of them no thread wrote. It is multiplied by zero, so with whatever the last kernel
// left in shared memory the answer is usually right; the verifier fills shared memory with 0xFF
// (a NaN) before run 0, and then it is not.
extern "C" __global__ void add_half_tile(const float* a, const float* b, float* c, int N)
{
    __shared__ float tile[256];
    const int t = threadIdx.x;
    const int i = blockIdx.x * 256 + t;
    if (t < 128)
        tile[t] = i < N ? a[i] : 0.0f;
    __syncthreads();
    if (i < N)
        c[i] = a[i] + b[i] + 0.0f * tile[(t + 128) % 256];
}
