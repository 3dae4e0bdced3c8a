// BROKEN ON PURPOSE (modifies an input). Computes c correctly but also stores the sum back into
// the input a (the parameter is not const, as in an accidental in-place variant). Expected:
// verdict fail on every shape with modified_inputs == ["a"].
extern "C" __global__ void add_and_overwrite_a(float* a, const float* __restrict__ b,
                                               float* __restrict__ c, long long n)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = a[i] + b[i];
        c[i] = v;
        a[i] = v; // BUG: writes into an input buffer
    }
}
