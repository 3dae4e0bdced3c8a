#include "common.cuh"
// The last thread reads one element past the end of x; the value read is multiplied by zero.
template <typename T>
__global__ void shift_add(const T* x, T* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + T(0) * x[i + 1];
}
int main()
{
    const int n = 1000;   // not a multiple of the block: a partial tile
    std::vector<float> h(n, 3.0f), r(n);
    float *x, *y;
    CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    shift_add<float><<<(n + 255) / 256, 256>>>(x, y, n);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("oob_read: sync says %s\n", cudaGetErrorString(e));
    if (e == cudaSuccess) {
        CHECK(cudaMemcpy(r.data(), y, n * 4, cudaMemcpyDeviceToHost));
        std::printf("oob_read: y[n-1]=%g\n", r[n - 1]);
    }
    return 0;
}
