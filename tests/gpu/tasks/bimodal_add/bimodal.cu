// UNSTABLE ON PURPOSE (correct results, timings that never settle). Keeps its call count in a
// __device__ global; on every other call block 0's first thread spins for about 10 ms before
// adding. The median of such a candidate never reaches the spread target, so the benchmark must
// end at its wall-clock time cap with the shape flagged unstable.
__device__ unsigned int g_calls;

extern "C" __global__ void add_bimodal(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const unsigned int call = atomicAdd(&g_calls, 1u);
        if (call % 2 == 1) {
            const long long start = clock64();
            while (clock64() - start < 20000000LL) { // about 10 ms at 2 GHz
            }
        }
    }
    if (i < n)
        c[i] = a[i] + b[i];
}
