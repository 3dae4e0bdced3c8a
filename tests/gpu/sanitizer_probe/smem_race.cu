#include "common.cuh"
// A block sum whose last steps assume warp-synchronous execution without __syncwarp or volatile:
// a shared-memory race that usually gives the right answer.
__global__ void block_sum(const float* x, float* out)
{
    __shared__ float s[256];
    const int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        if (stride > 32)
            __syncthreads();
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
    block_sum<<<blocks, 256>>>(x, out);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(r.data(), out, blocks * 4, cudaMemcpyDeviceToHost));
    int wrong = 0; for (float v : r) wrong += v != 256.0f;
    std::printf("smem_race: %d of %d blocks wrong\n", wrong, blocks);
    return 0;
}
