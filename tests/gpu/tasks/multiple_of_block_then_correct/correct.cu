// broken_add control: the plain, correct kernel. Every test that expects a broken candidate to
// fail runs against the same task, so this one passing shows the task itself is sound.
extern "C" __global__ void add_correct(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
