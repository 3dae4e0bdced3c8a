x = é + straße
// vector_add, naive: one thread per element with 4-byte loads. Already coalesced, so it is not
// far from bandwidth; the optimised version shows what 16-byte accesses and more bytes in flight
// per thread add on top.
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
