// BROKEN ON PURPOSE (unwritten output). A float4 kernel that forgets the scalar tail: the last
// N % 4 elements of c are never written (for N < 4, none is). Correct when N % 4 == 0.
// Expected: verdict fail on exactly the shapes with N % 4 != 0, each trial reporting
// unwritten == N % 4 with the first unwritten index 4 * (N / 4).
extern "C" __global__ void add_vec4_no_tail(const float* __restrict__ a, const float* __restrict__ b,
                                            float* __restrict__ c, long long n)
{
    const long long nvec = n / 4;
    const long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (v < nvec) {
        const float4 x = reinterpret_cast<const float4*>(a)[v];
        const float4 y = reinterpret_cast<const float4*>(b)[v];
        reinterpret_cast<float4*>(c)[v] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    // BUG: no scalar loop for elements 4 * nvec .. n - 1
}
