extern "C" __global__ void add_correct(const float* a, const float* b, float* c, long long n)
{
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
