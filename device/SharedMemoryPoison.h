#pragma once
// Fills every SM's shared memory with a byte pattern before a candidate runs (docs/verification.md,
// correctness rule 9). compute-sanitizer has no tool for shared memory read before it is written
// (initcheck covers global memory only), and shared memory keeps what the last kernel on an SM left
// there. The verifier poisons it with 0xFF before run 0 (a NaN in fp32, fp16 and bf16) and with 0x00
// before run 1: a kernel that reads shared memory it never wrote then gives NaN or two different
// answers, and fails. A kernel of ours, written in PTX and JIT-compiled by the driver once per runner.

#include "device/CudaModule.h"
#include "device/DeviceInfo.h"
#include "engine/core/Result.h"

#include <cuda.h>

#include <cstdint>

namespace kf::device {

class SharedMemoryPoison {
public:
    /// Loads the kernel for the current context's device.
    static Result<SharedMemoryPoison> load(const DeviceInfo& device);

    /// Every byte of every SM's shared memory set to `byte`; completes before returning.
    Result<void> fill(std::uint8_t byte, CUstream stream) const;

private:
    CudaModule m_module;
    CUfunction m_kernel = nullptr;
    int m_bytes = 0;       ///< the most dynamic shared memory one block may have
    int m_blocks = 0;      ///< two blocks per SM: every SM gets at least one
};

} // namespace kf::device
