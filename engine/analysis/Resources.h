#pragma once
// Per-kernel resource usage read from a cubin (ELF) plus the spill numbers of the ptxas report.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct KernelResources {
    std::string name;               ///< mangled (lowered) name, as in the cubin symbol table
    std::string demangled;          ///< human name: "void softmax_rows<256>(float const*, float*, int)"
    int registers = 0;              ///< per thread
    int staticSharedBytes = 0;      ///< user static __shared__, excluding the sm_90+ reserved 1 KiB
    int reservedSharedBytes = 0;    ///< system-reserved shared memory the cubin accounts for
    int localBytes = 0;             ///< stack frame per thread (local memory)
    int spillStoreBytes = -1;       ///< from the ptxas report; -1 when unknown
    int spillLoadBytes = -1;
    int constBank0Bytes = 0;        ///< constant bank 0 (kernel parameters + driver constants)
    int paramBytes = 0;             ///< kernel parameter bytes
    int barriers = 0;               ///< named barriers used
    int maxThreadsPerBlock = 0;     ///< __launch_bounds__ max threads, 0 if none
    int minBlocksPerSm = 0;         ///< __launch_bounds__ min blocks, 0 if none
    int maxRegisterCount = 0;       ///< __maxnreg__ / maxrregcount recorded in the cubin, 0 if none
};

/// Reads every kernel (entry function) of a cubin. Errors if the bytes are not a CUDA ELF.
Result<std::vector<KernelResources>> readCubinResources(std::string_view cubin);

/// The SM architecture a cubin was built for (e.g. 90 for sm_90), or an error.
Result<int> cubinArchitecture(std::string_view cubin);

/// Fills spill and stack numbers from a ptxas `-v` report (the NVRTC log) into `kernels`,
/// matching by mangled name.
void applyPtxasReport(std::string_view log, std::vector<KernelResources>& kernels);

/// Fills launch-bound numbers from the PTX `.entry` directives (.maxntid, .reqntid,
/// .minnctapersm, .maxnreg) where the cubin did not record them. ptxas folds
/// `.minnctapersm` into a register cap and keeps no record of it in the cubin, so the PTX is
/// the only place `minBlocksPerSm` can come from. Matches by mangled name.
void applyPtxDirectives(std::string_view ptx, std::vector<KernelResources>& kernels);

/// "void f<256>(float*)" from "_Z1fILi256EEvPf"; returns the input when it is not mangled.
std::string demangle(const std::string& name);

nlohmann::json toJson(const KernelResources& r);
KernelResources kernelResourcesFromJson(const nlohmann::json& j);

} // namespace kf
