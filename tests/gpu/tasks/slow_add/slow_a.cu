// Pool test kernel (tests/gpu/pool_check.py, case "kill"): a correct fp32 add whose every thread
// first waits about 150 ms (__nanosleep in a loop), so a verification lasts seconds and a runner
// can be killed while it works. Four identical copies give both endpoints of the pool something.
extern "C" __global__ void slow_add_a(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ c, long long n)
{
    for (int k = 0; k < 150; ++k)
        __nanosleep(1000000);
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
