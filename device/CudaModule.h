#pragma once
// A loaded cubin (cuModuleLoadData), unloaded with its owner. The runner loads the candidate's
// module fresh for every request and drops it afterwards, so __device__ globals never carry
// state from one request into the next.

#include "engine/core/Result.h"

#include <cuda.h>

#include <string>
#include <string_view>

namespace kf::device {

class CudaModule {
public:
    CudaModule() = default;
    ~CudaModule();
    CudaModule(CudaModule&& other) noexcept;
    CudaModule& operator=(CudaModule&& other) noexcept;
    CudaModule(const CudaModule&) = delete;
    CudaModule& operator=(const CudaModule&) = delete;

    /// Loads an ELF cubin for the current context's device. The error says when the cubin was
    /// built for another architecture than `deviceArch` ("sm_90").
    static Result<CudaModule> load(std::string_view cubin, const std::string& deviceArch);

    /// Loads PTX text (JIT-compiled by the driver) for one of the runner's own kernels.
    static Result<CudaModule> loadPtx(const std::string& ptx, const std::string& what);

    /// Looks up a kernel by its mangled (lowered) name; `shownName` is what errors call it.
    Result<CUfunction> function(const std::string& mangled, const std::string& shownName) const;

    /// Dynamic shared memory above the 48 KiB default needs an explicit opt-in per function.
    static Result<void> allowDynamicShared(CUfunction f, int bytes);
    /// Static shared memory of `f` (bytes), for error messages about shared-memory limits.
    static int staticSharedBytes(CUfunction f);
    /// Any cuFuncGetAttribute value of `f`, or `fallback` when the driver cannot tell.
    static int attribute(CUfunction f, CUfunction_attribute a, int fallback = 0);

    void unload();
    CUmodule handle() const { return m_module; }

private:
    CUmodule m_module = nullptr;
};

} // namespace kf::device
