#include "engine/compile/NvrtcLibrary.h"

#include "engine/core/DynamicLibrary.h"

#include <cstdlib>
#include <vector>

#ifndef KF_CUDA_TOOLKIT_ROOT
#define KF_CUDA_TOOLKIT_ROOT "/usr/local/cuda"
#endif

namespace kf {

namespace {

std::vector<std::string> candidates()
{
    std::vector<std::string> c;
    // An explicit choice is the only candidate: a user pinning a library must not silently get another.
    if (const char* p = std::getenv("KF_NVRTC_LIBRARY"); p && *p)
        return {p};
    // The loader path first (a user's LD_LIBRARY_PATH wins), then well-known toolkit places.
    for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
        c.emplace_back(so);
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* p = std::getenv(env); p && *p) {
            c.push_back(std::string(p) + "/lib64/libnvrtc.so");
            c.push_back(std::string(p) + "/lib/libnvrtc.so");
        }
    c.push_back(std::string(KF_CUDA_TOOLKIT_ROOT) + "/lib64/libnvrtc.so");
    c.emplace_back("/usr/local/cuda/lib64/libnvrtc.so");
    return c;
}

Result<const NvrtcLibrary*> load()
{
    auto lib = DynamicLibrary::openForProcess(candidates(), "libnvrtc (the CUDA runtime compiler)",
                                              "install the CUDA toolkit (NVRTC), or set KF_NVRTC_LIBRARY to the path of libnvrtc.so");
    if (!lib)
        return lib.error();
    static NvrtcLibrary t;
    t.path = lib.value()->path();
    SymbolBinder sym(*lib.value());
    sym.bind(t.getErrorString, "nvrtcGetErrorString");
    sym.bind(t.version, "nvrtcVersion");
    sym.bind(t.createProgram, "nvrtcCreateProgram");
    sym.bind(t.destroyProgram, "nvrtcDestroyProgram");
    sym.bind(t.compileProgram, "nvrtcCompileProgram");
    sym.bind(t.getPTXSize, "nvrtcGetPTXSize");
    sym.bind(t.getPTX, "nvrtcGetPTX");
    sym.bind(t.getCUBINSize, "nvrtcGetCUBINSize");
    sym.bind(t.getCUBIN, "nvrtcGetCUBIN");
    sym.bind(t.getProgramLogSize, "nvrtcGetProgramLogSize");
    sym.bind(t.getProgramLog, "nvrtcGetProgramLog");
    sym.bind(t.addNameExpression, "nvrtcAddNameExpression");
    sym.bind(t.getLoweredName, "nvrtcGetLoweredName");
    sym.bind(t.setFlowCallback, "nvrtcSetFlowCallback", false);
    if (auto bound = sym.finish("libnvrtc", "use NVRTC from CUDA 12.4 or newer (set KF_NVRTC_LIBRARY)"); !bound)
        return bound.error();
    int major = 0, minor = 0;
    t.version(&major, &minor);
    t.versionString = std::to_string(major) + "." + std::to_string(minor);
    return &t;
}

} // namespace

const Result<const NvrtcLibrary*>& NvrtcLibrary::get()
{
    static const Result<const NvrtcLibrary*> instance = load();
    return instance;
}

} // namespace kf
