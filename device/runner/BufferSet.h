#pragma once
// The device buffers of one shape: every input, output and scratch tensor of the candidate's
// plan as a guarded buffer (canaries on both sides), addressable by tensor name. Memory is
// freed when the set goes away, so each shape (and each verify trial) starts from fresh
// allocations and memory use stays bounded by one shape.

#include "device/GuardedBuffer.h"
#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <cuda.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kf::device {

struct TensorLayout {
    enum class Role { Input, Output, Scratch };
    std::string name;
    DType dtype = DType::F32;
    Role role = Role::Input;
    std::vector<std::int64_t> extents;      ///< scratch: one dimension, the element count
    std::int64_t elements = 0;
    size_t bytes = 0;
    bool zero = false;                      ///< scratch zero-filled before each run
    const TensorSpec* spec = nullptr;       ///< inputs and outputs; nullptr for scratch
};

/// Sizes of every tensor of `candidate` at `shape`, in task order (inputs, outputs, scratch).
/// Errors on overflow and on tensors larger than `memoryLimit` bytes.
Result<std::vector<TensorLayout>> layoutFor(const Task& task, const Candidate& candidate, const ShapeBinding& shape,
                                            std::int64_t memoryLimit);

class BufferSet {
public:
    /// Allocates the tensors of `layout` whose role is in `roles`; canaries seeded by `seed`.
    static Result<BufferSet> allocate(const std::vector<TensorLayout>& layout, std::vector<TensorLayout::Role> roles,
                                      std::uint64_t seed, CUstream stream);

    const GuardedBuffer* find(const std::string& name) const;
    const std::vector<GuardedBuffer>& buffers() const { return m_buffers; }
    /// name -> data pointer, for binding launch arguments.
    std::map<std::string, CUdeviceptr> pointers() const;

    Result<std::vector<GuardViolation>> checkGuards(CUstream stream) const;
    Result<void> writeGuards(CUstream stream) const;
    void release() { m_buffers.clear(); }

private:
    std::vector<GuardedBuffer> m_buffers;
};

/// "[6, 4098]" for messages.
std::string formatIndex(const std::vector<std::int64_t>& index);

} // namespace kf::device
