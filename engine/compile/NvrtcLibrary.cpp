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
    auto lib = DynamicLibrary::open(candidates(), "libnvrtc (the CUDA runtime compiler)",
                                    "install the CUDA toolkit (NVRTC), or set KF_NVRTC_LIBRARY to the path of libnvrtc.so");
    if (!lib)
        return lib.error();
    static DynamicLibrary keep; // lives for the process; see DynamicLibrary's destructor
    keep = std::move(lib.value());
    static NvrtcLibrary t;
    t.path = keep.path();
    std::string missing;
    auto sym = [&](auto& fn, const char* name, bool required) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(keep.symbol(name));
        if (!fn && required)
            missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    sym(t.getErrorString, "nvrtcGetErrorString", true);
    sym(t.version, "nvrtcVersion", true);
    sym(t.createProgram, "nvrtcCreateProgram", true);
    sym(t.destroyProgram, "nvrtcDestroyProgram", true);
    sym(t.compileProgram, "nvrtcCompileProgram", true);
    sym(t.getPTXSize, "nvrtcGetPTXSize", true);
    sym(t.getPTX, "nvrtcGetPTX", true);
    sym(t.getCUBINSize, "nvrtcGetCUBINSize", true);
    sym(t.getCUBIN, "nvrtcGetCUBIN", true);
    sym(t.getProgramLogSize, "nvrtcGetProgramLogSize", true);
    sym(t.getProgramLog, "nvrtcGetProgramLog", true);
    sym(t.addNameExpression, "nvrtcAddNameExpression", true);
    sym(t.getLoweredName, "nvrtcGetLoweredName", true);
    sym(t.setFlowCallback, "nvrtcSetFlowCallback", false);
    if (!missing.empty())
        return Error::failed("load libnvrtc", t.path + " lacks " + missing, "use NVRTC from CUDA 12.4 or newer (set KF_NVRTC_LIBRARY)");
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
