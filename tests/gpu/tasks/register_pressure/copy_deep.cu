// register_pressure: y = x, written to need many registers. Each thread loads DEPTH float4
// (4 * DEPTH floats) before it stores any of them, so all of them are live at once: about
// 4 * DEPTH registers of data per thread. With no launch bounds the compiler may use up to 255,
// and occupancy is limited by registers, the case the profile's occupancy hint is about.
template <int DEPTH>
__global__ void copy_deep(const float* __restrict__ xf, float* __restrict__ yf, long long nvec)
{
    const float4* __restrict__ x = reinterpret_cast<const float4*>(xf);
    float4* __restrict__ y = reinterpret_cast<float4*>(yf);
    const long long base = static_cast<long long>(blockIdx.x) * blockDim.x * DEPTH + threadIdx.x;
    float4 v[DEPTH];
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
        const long long k = base + static_cast<long long>(d) * blockDim.x;
        v[d] = k < nvec ? x[k] : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
        const long long k = base + static_cast<long long>(d) * blockDim.x;
        if (k < nvec)
            y[k] = v[d];
    }
}
