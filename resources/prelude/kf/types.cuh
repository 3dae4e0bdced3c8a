#pragma once
// kf/types.cuh — conversions between float (the compute type) and the storage types:
//   float kf::to_float(T)          for float, double, __half, __nv_bfloat16
//   T     kf::from_float<T>(float) round-to-nearest-even into the same types
//   kf::ceil_div(a, b)             integer ceil(a / b) for non-negative values, host and device

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kf {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(double x) { return static_cast<float>(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ double from_float<double>(float x) { return static_cast<double>(x); }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

/// ceil(a / b) for a >= 0, b > 0; usable in constant expressions (template arguments).
template <typename A, typename B>
__host__ __device__ __forceinline__ constexpr auto ceil_div(A a, B b) -> decltype(a / b)
{
    return (a + b - 1) / b;
}

} // namespace kf
