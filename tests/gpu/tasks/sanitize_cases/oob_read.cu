// Broken: peeks at a[i + 1] and multiplies it by zero, so the answer is right, but the thread of
// the last element reads a[N], past the end of the buffer (memcheck: out-of-bounds read).
extern "C" __global__ void add_peek(const float* a, const float* b, float* c, int N)
{
    const int i = blockIdx.x * 256 + threadIdx.x;
    if (i < N)
        c[i] = a[i] + b[i] + 0.0f * a[i + 1];
}
