#pragma once
// kf/vec.cuh — vectorised global-memory access. A 16-byte load or store is one instruction
// (LDG.128 / STG.128) instead of 4 or 8, which is what memory-bound kernels need to reach
// DRAM bandwidth:
//   kf::Vec<T, N>                  N consecutive T aligned to N * sizeof(T) bytes
//   kf::vec16_size<T>()            elements in 16 bytes: 4 floats, 8 halves, 8 bf16
//   kf::load_vec<N>(p) / store_vec  one N-wide access; p must be aligned to N * sizeof(T)
//   kf::load_float4 / store_float4  the same for float4
//   kf::load_floats / store_floats  N-wide access converted to / from float[N]
//   kf::is_aligned(p, bytes), kf::aligned16(p, q, ...)  pick the vector path at run time
// Contiguous fresh allocations start 256-byte aligned, but the start of row r of a [B, D] tensor
// is only 16-byte aligned when r * D * sizeof(T) is a multiple of 16: check, and fall back to
// scalar code for misaligned rows and for the tail that does not fill a whole vector.

#include <kf/types.cuh>

namespace kf {

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
    T v[N];
    __device__ __forceinline__ T& operator[](int i) { return v[i]; }
    __device__ __forceinline__ const T& operator[](int i) const { return v[i]; }
};

template <typename T>
__host__ __device__ __forceinline__ constexpr int vec16_size()
{
    return static_cast<int>(16 / sizeof(T));
}

__device__ __forceinline__ bool is_aligned(const void* p, unsigned long long bytes)
{
    return (reinterpret_cast<unsigned long long>(p) & (bytes - 1)) == 0;
}

/// True when every pointer is 16-byte aligned.
__device__ __forceinline__ bool aligned16() { return true; }
template <typename P, typename... Rest>
__device__ __forceinline__ bool aligned16(const P* p, const Rest*... rest)
{
    return is_aligned(p, 16) && aligned16(rest...);
}

template <int N, typename T>
__device__ __forceinline__ Vec<T, N> load_vec(const T* p)
{
    return *reinterpret_cast<const Vec<T, N>*>(p);
}

template <int N, typename T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, N>& v)
{
    *reinterpret_cast<Vec<T, N>*>(p) = v;
}

__device__ __forceinline__ float4 load_float4(const float* p)
{
    return *reinterpret_cast<const float4*>(p);
}

__device__ __forceinline__ void store_float4(float* p, float4 v)
{
    *reinterpret_cast<float4*>(p) = v;
}

/// Loads N elements with one access and converts them to float.
template <int N, typename T>
__device__ __forceinline__ void load_floats(const T* p, float (&out)[N])
{
    const Vec<T, N> v = load_vec<N>(p);
#pragma unroll
    for (int i = 0; i < N; ++i)
        out[i] = to_float(v[i]);
}

/// Converts N floats to T (round to nearest even) and stores them with one access.
template <int N, typename T>
__device__ __forceinline__ void store_floats(T* p, const float (&in)[N])
{
    Vec<T, N> v;
#pragma unroll
    for (int i = 0; i < N; ++i)
        v[i] = from_float<T>(in[i]);
    store_vec<N>(p, v);
}

} // namespace kf
