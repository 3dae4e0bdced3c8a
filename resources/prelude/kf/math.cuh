#pragma once
// kf/math.cuh — small float helpers the reductions and the examples share:
//   kf::pos_inf() / kf::neg_inf()       infinities without <cmath> or math_constants.h
//   kf::online_softmax_update / _merge  the (running max, running sum of exp) pair of a
//                                       one-pass softmax; merging two partial states is exact
//                                       up to rounding, and empty states (-inf, 0) are safe

namespace kf {

__device__ __forceinline__ float pos_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float neg_inf() { return __int_as_float(static_cast<int>(0xff800000u)); }

/// Folds one value x into the running (m = max so far, s = sum of exp(x_i - m)).
__device__ __forceinline__ void online_softmax_update(float& m, float& s, float x)
{
    const float m_new = fmaxf(m, x);
    // exp(-inf - -inf) would be NaN: an empty state contributes nothing.
    const float scale = (m == neg_inf()) ? 0.0f : expf(m - m_new);
    s = s * scale + ((x == neg_inf()) ? 0.0f : expf(x - m_new));
    m = m_new;
}

/// Merges the partial state (m2, s2) into (m, s).
__device__ __forceinline__ void online_softmax_merge(float& m, float& s, float m2, float s2)
{
    const float m_new = fmaxf(m, m2);
    const float a = (m == neg_inf()) ? 0.0f : s * expf(m - m_new);
    const float b = (m2 == neg_inf()) ? 0.0f : s2 * expf(m2 - m_new);
    m = m_new;
    s = a + b;
}

} // namespace kf
