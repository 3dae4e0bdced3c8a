// BROKEN ON PURPOSE (illegal address). Computes c correctly, then thread 0 stores through the
// wild pointer (float*)0x10, which is never mapped. The store is volatile so it cannot be
// dropped. The fault is a sticky error: the CUDA context is unusable afterwards and the runner
// must be replaced. Expected: verdict fail (or error) naming an illegal memory access; the next
// candidate passes.
extern "C" __global__ void add_wild_pointer(const float* __restrict__ a, const float* __restrict__ b,
                                            float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
    if (i == 0) {
        volatile float* wild = reinterpret_cast<volatile float*>(0x10); // BUG: a wild pointer
        *wild = 1.0f;
    }
}
