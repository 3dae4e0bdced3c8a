#include "common.cuh"
__global__ void scale(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i];
}
int main()
{
    const int n = 1000;
    std::vector<float> h(n, 1.0f), r(n);
    float *x, *y;
    CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    scale<<<(n + 255) / 256, 256>>>(x, y, n);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(r.data(), y, n * 4, cudaMemcpyDeviceToHost));
    std::printf("clean: y[0]=%g\n", r[0]);
    return 0;
}
