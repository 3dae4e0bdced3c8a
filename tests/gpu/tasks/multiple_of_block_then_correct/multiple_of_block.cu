// BROKEN ON PURPOSE (correct only for multiples of its block). No bounds check and no length
// parameter: it assumes N % 256 == 0, so with N = 1000 the last block writes 24 floats past the
// end of c (and reads past a and b); with N = 1 it writes 255. Correct for N = 256 and 65536.
// Expected: verdict fail, through a guard violation on c (side "after") or, if the stray writes
// reach unmapped memory, an illegal address; the next candidate passes.
extern "C" __global__ void add_no_bounds_check(const float* __restrict__ a, const float* __restrict__ b,
                                               float* __restrict__ c)
{
    const long long i = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x; // BUG: assumes N % 256 == 0
    c[i] = a[i] + b[i];
}
