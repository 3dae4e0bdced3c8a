#pragma once
// Registry IDs: `<lang>_<op>_<gpu_slug>_<dtype>_<shape_slug>_v<n>`, e.g.
// `cuda_softmax_h100_fp32_b8192-d4096_v1`. Everything before `_v<n>` is a function of the task,
// the GPU and the shapes, so promoting the same kernel again yields the same prefix and the next n.

#include "engine/task/Task.h"

#include <optional>
#include <string>

namespace kf {

/// "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA GeForce RTX 4090" -> "rtx4090", "NVIDIA A100-SXM4-80GB" -> "a100".
std::string gpuSlug(const std::string& gpuName);
/// The reference's op: "softmax", a tape's ops joined ("add_rms_norm"), or the task name for TorchScript.
std::string opSlug(const Task& task);
/// The first benchmark shape, symbols in task order: "b8192-d4096"; "scalar" when the task has none.
std::string shapeSlug(const Task& task);
/// Everything before "_v<n>".
std::string kernelIdPrefix(const Task& task, const std::string& gpuName);
std::string kernelId(const std::string& prefix, int version);
/// {prefix, n} for "<prefix>_v<n>"; nullopt when `id` has no version suffix.
std::optional<std::pair<std::string, int>> splitKernelId(const std::string& id);
/// True for IDs safe as folder names: [a-z0-9_+-.], not starting with '.'.
bool isValidKernelId(const std::string& id);

} // namespace kf
