// A 480 KiB array in every thread's stack frame (volatile, so it stays in local memory). The
// driver must reserve the frame for every thread the GPU can hold at once (480 KiB x 2048 x 132
// SMs on an H100, far more than its memory): the launch fails, and the error must say why.
constexpr int kFrame = 480 * 1024 / 4;

extern "C" __global__ void add_big_frame(const float* a, const float* b, float* c, long long n)
{
    volatile float frame[kFrame];
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i >= n)
        return;
    const int k = static_cast<int>(i % kFrame);
    frame[k] = a[i];
    c[i] = frame[k] + b[i];
}
