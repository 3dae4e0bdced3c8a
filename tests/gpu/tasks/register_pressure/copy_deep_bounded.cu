// register_pressure: the same deep copy as copy_deep.cu under __launch_bounds__(256, 4): the
// compiler must fit four 256-thread blocks per SM, so at most 64 registers per thread. The
// profile should show twice the theoretical occupancy of copy_deep.cu, paid for with spills to
// local memory (about 112 B per thread with NVRTC 13.0): the trade the spills hint points at.
template <int DEPTH>
__global__ void __launch_bounds__(256, 4) copy_deep(const float* __restrict__ xf, float* __restrict__ yf, long long nvec)
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
