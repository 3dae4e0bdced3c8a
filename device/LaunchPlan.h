#pragma once
// A candidate's launch plan made concrete: kernels resolved in the loaded module through the
// lowered names, and for one shape the grid, block, dynamic shared memory and packed arguments.
// cuLaunchKernel takes an array of pointers, one per parameter, each pointing at that argument's
// value; BoundLaunch keeps the values in 8-byte slots and builds the array at enqueue time, so a
// BoundLaunch can be copied or moved freely.

#include "device/CudaModule.h"
#include "device/DeviceInfo.h"
#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <cuda.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace kf::device {

struct BoundLaunch {
    int index = 0;
    std::string kernel;                       ///< name expression, for messages
    CUfunction function = nullptr;
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    unsigned sharedBytes = 0;                 ///< dynamic shared memory
    int localBytes = 0;                       ///< local memory per thread (stack frame, spills)
    std::vector<std::array<unsigned char, 8>> args;
    /// "launch 0 (softmax<256>)"
    std::string describe() const;
};

class LaunchPlan {
public:
    /// Resolves every launch's kernel in `module`. Checks, when the driver can tell, that the
    /// kernel takes as many parameters as the plan passes and of the same sizes.
    static Result<LaunchPlan> resolve(const Candidate& candidate, const CudaModule& module,
                                      const std::map<std::string, std::string>& loweredNames);

    /// Evaluates the plan for `shape`; tensor arguments come from `pointers` (name -> data).
    /// Opts in to more than 48 KiB of dynamic shared memory when a launch asks for it.
    Result<std::vector<BoundLaunch>> bind(const Task& task, const ShapeBinding& shape,
                                          const std::map<std::string, CUdeviceptr>& pointers,
                                          const DeviceInfo& device) const;

    /// Enqueues one launch on `stream` (no synchronisation). A failure here is a configuration
    /// error (resources, limits); faults inside the kernel surface at the next synchronise.
    static Result<void> enqueue(const BoundLaunch& launch, CUstream stream);

private:
    /// What the driver says of a resolved kernel, asked once per plan rather than per launch.
    struct KernelLimits {
        int maxThreadsPerBlock = 1024;   ///< its __launch_bounds__, or what its registers allow
        int registers = 0;
        int localBytes = 0;              ///< per thread: stack frame and spills
    };
    const Candidate* m_candidate = nullptr;
    std::vector<CUfunction> m_functions;
    std::vector<KernelLimits> m_limits;
};

/// Bytes an argument of the plan occupies in the kernel's parameter list (tensors are pointers).
int argumentBytes(const LaunchArg& arg);

} // namespace kf::device
