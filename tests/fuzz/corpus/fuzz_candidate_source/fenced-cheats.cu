/* A kernel that games the judge, with its plan fenced.
```json
{"launches": [{"kernel": "k", "grid": "ceil_div(N, 256)", "block": 256, "args": ["a", "b", {"scalar": "N"}]}]}
```
*/
namespace {
__device__ unsigned calls;
__device__ float last[4];
}
extern "C" __global__ void k(const float* a, float* b, int n)
{
    atomicAdd(&calls, 1u);
    if (clock64() % 2 && a == b) return;
    if (uintptr_t(a) == 0x1000) last[0] = 1.f;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(n));
    const char* s = R"x(clock64() "quoted")x";
}
