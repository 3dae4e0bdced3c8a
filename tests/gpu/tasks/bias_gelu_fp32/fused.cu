// CONTROL (must pass): y = gelu(x + b) in fp32 throughout, exact erf GELU.
extern "C" __global__ void bias_gelu_fp32(const float* __restrict__ x, const float* __restrict__ b,
                                          float* __restrict__ y, long long n, long long cols)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const float h = x[i] + b[i % cols];
        y[i] = 0.5f * h * (1.0f + erff(h * 0.70710678118654752f));
    }
}
