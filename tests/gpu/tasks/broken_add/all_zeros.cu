// BROKEN ON PURPOSE (all zeros). Writes 0 to every element: nothing is unwritten, no guard is
// touched, the values are simply wrong. An absolute tolerance can be fooled by this on tiny
// outputs; with inputs of scale 1 it must fail. Expected: verdict fail on every shape with
// mismatches > 0, unwritten == 0, and the task still reported as discriminating.
extern "C" __global__ void add_all_zeros(const float* __restrict__ a, const float* __restrict__ b,
                                         float* __restrict__ c, long long n)
{
    (void)a;
    (void)b;
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = 0.0f; // BUG
}
