#include "device/CudaModule.h"

#include "device/CudaDriver.h"

#include <utility>

namespace kf::device {

CudaModule::~CudaModule()
{
    unload();
}

CudaModule::CudaModule(CudaModule&& other) noexcept : m_module(std::exchange(other.m_module, nullptr)) {}

CudaModule& CudaModule::operator=(CudaModule&& other) noexcept
{
    if (this != &other) {
        unload();
        m_module = std::exchange(other.m_module, nullptr);
    }
    return *this;
}

void CudaModule::unload()
{
    if (m_module) {
        (void)KF_CU(cuModuleUnload, m_module);
        m_module = nullptr;
    }
}

Result<CudaModule> CudaModule::load(std::string_view cubin, const std::string& deviceArch)
{
    if (cubin.size() < 4 || cubin.substr(0, 4) != "\x7f" "ELF")
        return Error::failed("load the candidate's cubin", "the cubin is not an ELF image (" + std::to_string(cubin.size()) + " bytes)", "compile for a real architecture (sm_XX), not a virtual one (compute_XX)");
    CudaModule m;
    const CUresult r = KF_CU(cuModuleLoadData, &m.m_module, cubin.data());
    if (r != CUDA_SUCCESS) {
        Error e = cuError(r, "cuModuleLoadData", __FILE__, __LINE__);
        e.what = "load the candidate's cubin";
        if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE ||
            r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_INVALID_SOURCE)
            e.hint = "compile the candidate for this GPU's architecture (" + deviceArch + ")";
        m.m_module = nullptr;
        return e;
    }
    return m;
}

Result<CudaModule> CudaModule::loadPtx(const std::string& ptx, const std::string& what)
{
    CudaModule m;
    const CUresult r = KF_CU(cuModuleLoadData, &m.m_module, ptx.c_str());
    if (r != CUDA_SUCCESS) {
        Error e = cuError(r, "cuModuleLoadData", __FILE__, __LINE__);
        e.what = "load " + what;
        m.m_module = nullptr;
        return e;
    }
    return m;
}

Result<CUfunction> CudaModule::function(const std::string& mangled, const std::string& shownName) const
{
    CUfunction f = nullptr;
    const CUresult r = KF_CU(cuModuleGetFunction, &f, m_module, mangled.c_str());
    if (r != CUDA_SUCCESS) {
        Error e = cuError(r, "cuModuleGetFunction", __FILE__, __LINE__);
        e.what = "find kernel " + shownName;
        if (r == CUDA_ERROR_NOT_FOUND)
            e.why = "the cubin has no kernel named " + mangled + " (" + shownName + ")";
        e.hint = "recompile: the lowered names must come from the same build as the cubin";
        return e;
    }
    return f;
}

Result<void> CudaModule::allowDynamicShared(CUfunction f, int bytes)
{
    KF_CU_CHECK(cuFuncSetAttribute, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
    return {};
}

int CudaModule::attribute(CUfunction f, CUfunction_attribute a, int fallback)
{
    int v = 0;
    if (KF_CU(cuFuncGetAttribute, &v, a, f) != CUDA_SUCCESS)
        return fallback;
    return v;
}

int CudaModule::staticSharedBytes(CUfunction f)
{
    int v = 0;
    if (KF_CU(cuFuncGetAttribute, &v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) != CUDA_SUCCESS)
        return 0;
    return v;
}

} // namespace kf::device
