#include "common.cuh"
// Reads a shared-memory element no thread wrote (half the tile is filled), multiplied by zero so
// the answer is usually right unless the garbage is NaN or Inf.
__global__ void half_tile(const float* x, float* y)
{
    __shared__ float s[256];
    const int t = threadIdx.x;
    if (t < 128)
        s[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    y[blockIdx.x * 256 + t] = x[blockIdx.x * 256 + t] + 0.0f * s[(t + 128) % 256];
}
int main()
{
    const int blocks = 16, n = blocks * 256;
    std::vector<float> h(n, 2.0f), r(n);
    float *x, *y;
    CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    half_tile<<<blocks, 256>>>(x, y);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(r.data(), y, n * 4, cudaMemcpyDeviceToHost));
    int wrong = 0; for (float v : r) wrong += v != 2.0f;
    std::printf("uninit_smem: %d of %d wrong\n", wrong, n);
    return 0;
}
