#pragma once
// kf/reduce.cuh — reductions across a warp and across a block:
//   kf::warp_reduce_sum(v) / warp_reduce_max(v)    butterfly over __shfl_xor_sync; every lane
//                                                  of the warp gets the result. Width < 32
//                                                  (a power of two) reduces independent groups
//                                                  of that many lanes.
//   kf::block_reduce_sum(v) / block_reduce_max(v)  every thread of the block gets the result.
//   kf::warp_inclusive_sum(v)                      lane i gets v_0 + ... + v_i (a scan, by
//                                                  __shfl_up_sync; the building block of cumsum)
// The block versions need all threads of the block to call them (they contain __syncthreads),
// a block of 32..1024 threads in any shape whose total is a multiple of 32, and may be called
// several times in a row (they synchronise before reusing their shared memory).
// Types: float, double, int, unsigned, long long. warp_reduce_max on floats uses fmaxf, which
// returns the other operand when one is NaN.

#include <kf/math.cuh>

namespace kf {
namespace detail {

struct SumOp {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
    template <typename T>
    __device__ __forceinline__ static T identity() { return T(0); }
};

struct MaxOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
    __device__ __forceinline__ double operator()(double a, double b) const { return fmax(a, b); }
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; }

    template <typename T>
    __device__ __forceinline__ static T identity();
};
template <>
__device__ __forceinline__ float MaxOp::identity<float>() { return neg_inf(); }
template <>
__device__ __forceinline__ double MaxOp::identity<double>() { return __longlong_as_double(0xfff0000000000000ull); }
template <>
__device__ __forceinline__ int MaxOp::identity<int>() { return -2147483647 - 1; }
template <>
__device__ __forceinline__ unsigned MaxOp::identity<unsigned>() { return 0u; }
template <>
__device__ __forceinline__ long long MaxOp::identity<long long>() { return -9223372036854775807ll - 1; }

template <int Width, typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op)
{
    static_assert(Width >= 1 && Width <= 32 && (Width & (Width - 1)) == 0,
                  "Width must be a power of two no larger than 32");
#pragma unroll
    for (int offset = Width / 2; offset > 0; offset /= 2)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, offset, Width));
    return v;
}

template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, Op op)
{
    __shared__ T partial[32];
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned warps = (blockDim.x * blockDim.y * blockDim.z) / 32;
    const unsigned lane = tid % 32, warp = tid / 32;

    v = warp_reduce<32>(v, op);
    __syncthreads(); // an earlier call may still be reading `partial`
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    // Every warp reduces the per-warp partials, so every thread ends with the result and no
    // third barrier is needed.
    v = lane < warps ? partial[lane] : Op::template identity<T>();
    return warp_reduce<32>(v, op);
}

} // namespace detail

template <int Width = 32, typename T>
__device__ __forceinline__ T warp_reduce_sum(T v)
{
    return detail::warp_reduce<Width>(v, detail::SumOp{});
}

template <int Width = 32, typename T>
__device__ __forceinline__ T warp_reduce_max(T v)
{
    return detail::warp_reduce<Width>(v, detail::MaxOp{});
}

/// Inclusive prefix sum across the warp (Kogge-Stone, log2(32) shuffle steps).
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T v)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane)); // right for any block shape
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const T other = __shfl_up_sync(0xffffffffu, v, offset);
        if (lane >= static_cast<unsigned>(offset))
            v += other;
    }
    return v;
}

template <typename T>
__device__ __forceinline__ T block_reduce_sum(T v)
{
    return detail::block_reduce(v, detail::SumOp{});
}

template <typename T>
__device__ __forceinline__ T block_reduce_max(T v)
{
    return detail::block_reduce(v, detail::MaxOp{});
}

} // namespace kf
