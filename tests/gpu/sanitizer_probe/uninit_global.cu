#include "common.cuh"
// Reads a global buffer nobody wrote (cudaMalloc without a memset or a copy).
__global__ void add_bias(const float* x, const float* bias, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + 0.0f * bias[i % 32];
}
int main()
{
    const int n = 4096;
    std::vector<float> h(n, 1.0f), r(n);
    float *x, *bias, *y;
    CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&bias, 32 * 4)); CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    add_bias<<<n / 256, 256>>>(x, bias, y, n);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(r.data(), y, n * 4, cudaMemcpyDeviceToHost));
    std::printf("uninit_global: y[0]=%g\n", r[0]);
    return 0;
}
