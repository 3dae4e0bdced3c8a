#pragma once
// kf/prelude.cuh — KernelForge's device library in one include. Offers everything below in
// namespace kf; every function is __device__ __forceinline__ (ceil_div, vec16_size and
// row_segment also work on the host):
//   kf/types.cuh   to_float / from_float<T> for float, double, __half, __nv_bfloat16; ceil_div
//   kf/math.cuh    pos_inf/neg_inf, the online-softmax (max, sum) update and merge
//   kf/vec.cuh     16-byte vector loads/stores (4 floats, 8 halves, 8 bf16) and alignment checks
//   kf/reduce.cuh  warp_reduce_sum/max and warp_inclusive_sum (shuffles), block_reduce_sum/max
//   kf/rows.cuh    the row schedules by row length (rows per warp, block, split, persistent);
//                  row_segment
// Device code only: NVRTC has no host headers, so only CUDA headers (cuda_fp16.h, cuda_bf16.h)
// are included.

#include <kf/types.cuh>
#include <kf/math.cuh>
#include <kf/vec.cuh>
#include <kf/reduce.cuh>
#include <kf/rows.cuh>
