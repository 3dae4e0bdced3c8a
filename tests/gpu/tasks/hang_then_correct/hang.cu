// BROKEN ON PURPOSE (never finishes). Waits for a "ready" flag in the input that nobody will
// ever set: it spins until the first word of a holds the all-ones bit pattern, a NaN payload the
// input generator never produces. The read is volatile, so the compiler must keep the load and
// the loop (a loop with a volatile access is not one it may assume terminates). Expected: the
// launch watchdog stops it; verdict fail (or error) naming a timeout; the next candidate passes.
extern "C" __global__ void add_wait_forever(const float* __restrict__ a, const float* __restrict__ b,
                                            float* __restrict__ c, long long n)
{
    const volatile unsigned int* flag = reinterpret_cast<const volatile unsigned int*>(a);
    while (*flag != 0xFFFFFFFFu) {
        // BUG: spin until the input changes, which it never does
    }
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
