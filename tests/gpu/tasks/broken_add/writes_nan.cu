// BROKEN ON PURPOSE (writes NaN). Correct everywhere except element n / 2, which gets 0/0
// (computed at run time from the input, so it is not folded away): a NaN where the reference
// is finite. Expected: verdict fail on every shape with one non-finite mismatch at index n / 2,
// and no unwritten elements (a written NaN must not be mistaken for the NaN sentinel).
extern "C" __global__ void add_writes_nan(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i] + b[i];
        if (i == n / 2) {
            const float zero = a[i] - a[i]; // BUG: 0 for any finite input
            v = zero / zero;                // 0/0 = NaN
        }
        c[i] = v;
    }
}
