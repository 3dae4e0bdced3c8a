/* residual_rmsnorm, written from the prompt `kforge prompt` rendered for the imported problem
   (tests/gpu/agent/residual_rmsnorm.py): y = (x + r) * rsqrt(mean((x + r)^2) + eps) * weight.

   One 256-thread block per row. x and r are read once with 16-byte loads, their sum h stays in
   registers (four float4 per thread covers a 4096-wide row; longer rows re-read the rest), the
   sum of squares is reduced in fp32 with the prelude's block reduction, and y is written with
   16-byte stores. A scalar path covers rows whose length is not a multiple of 4 or pointers that
   are not 16-byte aligned. NaN and infinities propagate as in LibTorch (inf * 0 is NaN there too).

```json
{"description": "one 256-thread block per row, x and r read once with 16-byte loads, the row in registers",
 "launches": [{"kernel": "residual_rmsnorm_rows", "grid": "BATCH_SIZE", "block": 256,
   "args": ["x", "r", "weight", "y", {"scalar": "DIM", "type": "int64"}, {"scalar": "1e-6", "type": "fp32"}]}]}
```
*/
#include <kf/prelude.cuh>

constexpr int kThreads = 256;
constexpr int kCache = 4;   // float4 per thread kept in registers: rows up to kThreads * kCache * 4 floats

extern "C" __global__ void __launch_bounds__(kThreads)
    residual_rmsnorm_rows(const float* __restrict__ x, const float* __restrict__ r, const float* __restrict__ w,
                          float* __restrict__ y, long long dim, float eps)
{
    const long long row = blockIdx.x;
    const float* xr = x + row * dim;
    const float* rr = r + row * dim;
    float* yr = y + row * dim;
    const bool vec = dim % 4 == 0 && kf::aligned16(xr, rr, yr, w);

    float sumsq = 0.0f;
    float4 cache[kCache];
    if (vec) {
        const long long n4 = dim / 4;
#pragma unroll
        for (int c = 0; c < kCache; ++c) {
            const long long i = threadIdx.x + static_cast<long long>(c) * kThreads;
            if (i < n4) {
                const float4 a = kf::load_float4(xr + 4 * i);
                const float4 b = kf::load_float4(rr + 4 * i);
                const float4 h = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
                cache[c] = h;
                sumsq += h.x * h.x + h.y * h.y + h.z * h.z + h.w * h.w;
            }
        }
        for (long long i = threadIdx.x + static_cast<long long>(kCache) * kThreads; i < n4; i += kThreads) {
            const float4 a = kf::load_float4(xr + 4 * i);
            const float4 b = kf::load_float4(rr + 4 * i);
            const float4 h = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
            sumsq += h.x * h.x + h.y * h.y + h.z * h.z + h.w * h.w;
        }
    } else {
        for (long long i = threadIdx.x; i < dim; i += kThreads) {
            const float h = xr[i] + rr[i];
            sumsq += h * h;
        }
    }

    const float total = kf::block_reduce_sum(sumsq);
    const float scale = rsqrtf(total / static_cast<float>(dim) + eps);

    if (vec) {
        const long long n4 = dim / 4;
#pragma unroll
        for (int c = 0; c < kCache; ++c) {
            const long long i = threadIdx.x + static_cast<long long>(c) * kThreads;
            if (i < n4) {
                const float4 h = cache[c];
                const float4 g = kf::load_float4(w + 4 * i);
                kf::store_float4(yr + 4 * i, make_float4(h.x * scale * g.x, h.y * scale * g.y, h.z * scale * g.z,
                                                         h.w * scale * g.w));
            }
        }
        for (long long i = threadIdx.x + static_cast<long long>(kCache) * kThreads; i < n4; i += kThreads) {
            const float4 a = kf::load_float4(xr + 4 * i);
            const float4 b = kf::load_float4(rr + 4 * i);
            const float4 g = kf::load_float4(w + 4 * i);
            kf::store_float4(yr + 4 * i, make_float4((a.x + b.x) * scale * g.x, (a.y + b.y) * scale * g.y,
                                                     (a.z + b.z) * scale * g.z, (a.w + b.w) * scale * g.w));
        }
    } else {
        for (long long i = threadIdx.x; i < dim; i += kThreads)
            yr[i] = (xr[i] + rr[i]) * scale * w[i];
    }
}
