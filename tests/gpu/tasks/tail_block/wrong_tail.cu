// BROKEN ON PURPOSE (wrong tail block). Bounds-checked, but a partial last block (N % 256 != 0)
// stores a[i] instead of a[i] + b[i]: every element of that block is wrong, nothing else is.
// Expected: verdict fail exactly when N % 256 != 0, with N % 256 mismatches starting at
// 256 * (N / 256); `kforge verify --shrink` reaches N = 257 (the task's N starts at 256).
extern "C" __global__ void add_wrong_tail(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const bool partialBlock = (n % 256) != 0 && static_cast<long long>(blockIdx.x) == n / 256;
    c[i] = partialBlock ? a[i] : a[i] + b[i]; // BUG: b forgotten in the tail block
}
