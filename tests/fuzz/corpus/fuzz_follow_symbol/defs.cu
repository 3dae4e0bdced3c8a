#include "common.cuh"
#define TILE 32
typedef struct { int x; } Pair;
typedef void (*Fn)(int);
using Vec = float4;
struct Acc : Base { float v; };
static __device__ inline float warp_sum(float v) noexcept { return v; }
__global__ void kernel(float* out) { out[0] = warp_sum(TILE); Pair p; Fn f; Vec w; Acc a; }
