// Correct arithmetic, wrong plan: the kernel promises at most 64 threads per block, the task's
// launch plan asks for 256. The runner must name both numbers before launching.
extern "C" __global__ void __launch_bounds__(64) add_bounded64(const float* a, const float* b, float* c, long long n)
{
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
