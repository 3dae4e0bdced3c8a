#include "common.cuh"
// A barrier only some threads of the block reach.
__global__ void partial_barrier(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float s[64];
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    if (threadIdx.x < 16)
        __syncthreads();
    if (i < n)
        y[i] = s[threadIdx.x] * 2.0f;
}
int main()
{
    const int n = 256;
    std::vector<float> h(n, 1.0f), r(n);
    float *x, *y;
    CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    partial_barrier<<<n / 64, 64>>>(x, y, n);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("divergent_sync: sync says %s\n", cudaGetErrorString(e));
    return 0;
}
