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
    static NvrtcLibrary t;
    const LibrarySpec spec{candidates(), "libnvrtc (the CUDA runtime compiler)",
                           "install the CUDA toolkit (NVRTC), or set KF_NVRTC_LIBRARY to the path of libnvrtc.so",
                           "libnvrtc", "use NVRTC from CUDA 12.4 or newer (set KF_NVRTC_LIBRARY)"};
    auto loaded = loadFunctionTable(t, spec, [](SymbolBinder& sym) {
#define KF_NVRTC_LOAD(member, name) sym.bind(t.member, "nvrtc" #name)
        KF_NVRTC_LOAD(getErrorString, GetErrorString);
        KF_NVRTC_LOAD(version, Version);
        KF_NVRTC_LOAD(createProgram, CreateProgram);
        KF_NVRTC_LOAD(destroyProgram, DestroyProgram);
        KF_NVRTC_LOAD(compileProgram, CompileProgram);
        KF_NVRTC_LOAD(getPTXSize, GetPTXSize);
        KF_NVRTC_LOAD(getPTX, GetPTX);
        KF_NVRTC_LOAD(getCUBINSize, GetCUBINSize);
        KF_NVRTC_LOAD(getCUBIN, GetCUBIN);
        KF_NVRTC_LOAD(getProgramLogSize, GetProgramLogSize);
        KF_NVRTC_LOAD(getProgramLog, GetProgramLog);
        KF_NVRTC_LOAD(addNameExpression, AddNameExpression);
        KF_NVRTC_LOAD(getLoweredName, GetLoweredName);
#undef KF_NVRTC_LOAD
        sym.bind(t.setFlowCallback, "nvrtcSetFlowCallback", false); // cancelling a compile; optional
    });
    if (!loaded)
        return loaded;
    int major = 0, minor = 0;
    t.version(&major, &minor);
    t.versionString = std::to_string(major) + "." + std::to_string(minor);
    return loaded;
}

} // namespace

const Result<const NvrtcLibrary*>& NvrtcLibrary::get()
{
    static const Result<const NvrtcLibrary*> instance = load();
    return instance;
}

} // namespace kf
