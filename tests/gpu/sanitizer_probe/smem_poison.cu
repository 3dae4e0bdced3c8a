#include "common.cuh"
// Does shared memory keep what an earlier kernel wrote? A poison kernel fills every SM's shared
// memory with 0xFF bytes (a NaN for fp32 and fp16); a kernel that reads an element it never wrote
// then sees NaN and its output becomes NaN even when the value is multiplied by zero.
__global__ void poison(int words)
{
    extern __shared__ unsigned int p[];
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        p[i] = 0xFFFFFFFFu;
    __syncthreads();
    if (p[threadIdx.x % words] == 1u) p[0] = 0; // keep the stores
}
__global__ void half_tile(const float* x, float* y)
{
    __shared__ float s[256];
    const int t = threadIdx.x;
    if (t < 128)
        s[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    y[blockIdx.x * 256 + t] = x[blockIdx.x * 256 + t] + 0.0f * s[(t + 128) % 256];
}
__global__ void half_tile_dyn(const float* x, float* y)
{
    extern __shared__ float d[];
    const int t = threadIdx.x;
    if (t < 128)
        d[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    y[blockIdx.x * 256 + t] = x[blockIdx.x * 256 + t] + 0.0f * d[(t + 128) % 256];
}
int main()
{
    int dev = 0, sms = 0, maxOptin = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&maxOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    CHECK(cudaFuncSetAttribute(poison, cudaFuncAttributeMaxDynamicSharedMemorySize, maxOptin));
    const int blocks = 528, n = blocks * 256;
    std::vector<float> h(n, 2.0f), r(n);
    float *x, *y;
    CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    for (int variant = 0; variant < 4; ++variant) {
        const bool poisoned = variant & 1, dyn = variant & 2;
        if (poisoned) poison<<<sms * 2, 1024, maxOptin>>>(maxOptin / 4);
        if (dyn) half_tile_dyn<<<blocks, 256, 1024>>>(x, y);
        else half_tile<<<blocks, 256>>>(x, y);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(r.data(), y, n * 4, cudaMemcpyDeviceToHost));
        int nan = 0; for (float v : r) nan += v != v;
        std::printf("smem_poison: poisoned=%d dynamic=%d: %d of %d NaN (maxOptin %d, %d SMs)\n", poisoned, dyn, nan, n, maxOptin, sms);
    }
    return 0;
}
