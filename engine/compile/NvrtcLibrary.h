#pragma once
// Function table for libnvrtc, loaded with dlopen on first use (the lazy-stub idea of PyTorch's
// NVRTC wrapper): nothing of ours links libnvrtc, so every binary starts without it and the
// first compile says exactly what is missing.

#include "engine/core/Result.h"

#include <nvrtc.h>

#include <string>

namespace kf {

struct NvrtcLibrary {
    decltype(&::nvrtcGetErrorString) getErrorString = nullptr;
    decltype(&::nvrtcVersion) version = nullptr;
    decltype(&::nvrtcCreateProgram) createProgram = nullptr;
    decltype(&::nvrtcDestroyProgram) destroyProgram = nullptr;
    decltype(&::nvrtcCompileProgram) compileProgram = nullptr;
    decltype(&::nvrtcGetPTXSize) getPTXSize = nullptr;
    decltype(&::nvrtcGetPTX) getPTX = nullptr;
    decltype(&::nvrtcGetCUBINSize) getCUBINSize = nullptr;
    decltype(&::nvrtcGetCUBIN) getCUBIN = nullptr;
    decltype(&::nvrtcGetProgramLogSize) getProgramLogSize = nullptr;
    decltype(&::nvrtcGetProgramLog) getProgramLog = nullptr;
    decltype(&::nvrtcAddNameExpression) addNameExpression = nullptr;
    decltype(&::nvrtcGetLoweredName) getLoweredName = nullptr;
    decltype(&::nvrtcSetFlowCallback) setFlowCallback = nullptr; ///< optional (CUDA >= 12.8)

    std::string path;          ///< where it was loaded from
    std::string versionString; ///< "13.0"

    /// Loads once per process (thread-safe); later calls return the same table or error.
    static const Result<const NvrtcLibrary*>& get();
};

} // namespace kf
