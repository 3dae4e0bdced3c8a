#include "common.cuh"
// The legacy warp-synchronous block sum: the last six steps run without a barrier through a
// volatile pointer. Usually right on the GPU, still a shared-memory race.
__global__ void block_sum(const float* x, float* out)
{
    __shared__ float s[256];
    const int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    for (int stride = 128; stride > 32; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t < 32) {
        volatile float* v = s;
        v[t] += v[t + 32]; v[t] += v[t + 16]; v[t] += v[t + 8];
        v[t] += v[t + 4];  v[t] += v[t + 2];  v[t] += v[t + 1];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
int main()
{
    const int blocks = 64, n = blocks * 256;
    std::vector<float> h(n, 1.0f), r(blocks);
    float *x, *out;
    CHECK(cudaMalloc(&x, n * 4)); CHECK(cudaMalloc(&out, blocks * 4));
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    int wrong = 0;
    for (int rep = 0; rep < 20; ++rep) {
        block_sum<<<blocks, 256>>>(x, out);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(r.data(), out, blocks * 4, cudaMemcpyDeviceToHost));
        for (float v : r) wrong += v != 256.0f;
    }
    std::printf("smem_race_volatile: %d of %d block sums wrong\n", wrong, 20 * blocks);
    return 0;
}
