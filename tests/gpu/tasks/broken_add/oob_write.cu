// BROKEN ON PURPOSE (out-of-bounds write). Computes every element correctly, then thread 0
// writes a "terminator" one element past the end of c, as C-string habits suggest. Every shape
// is affected. Expected: verdict fail, a guard violation on buffer c, side "after", at byte offset
// 0..3 (the element c[N]; byte 0 unless the random canary already held that byte).
extern "C" __global__ void add_oob_write(const float* __restrict__ a, const float* __restrict__ b,
                                         float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
    if (i == 0)
        c[n] = 0.0f; // BUG: c has n elements, so c[n] is the first byte past the end
}
