// Broken: each thread stores a[i] and then reads the element its neighbour lane stored, with no
// __syncwarp in between. Lanes of a warp usually run in step, so the answer is usually right; it
// is still a shared-memory race (racecheck).
extern "C" __global__ void add_swap(const float* a, const float* b, float* c, int N)
{
    __shared__ float tile[256];
    const int t = threadIdx.x;
    const int i = blockIdx.x * 256 + t;
    tile[t] = i < N ? a[i] : 0.0f;
    const int j = blockIdx.x * 256 + (t ^ 1);
    if (j < N)
        c[j] = tile[t ^ 1] + b[j];
}
