// NVRTC's and ptxas' logs: text from the compiler, parsed into diagnostics and resource counts.
#include "engine/analysis/Resources.h"
#include "engine/compile/Diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view log(reinterpret_cast<const char*>(data), size);
    for (const kf::Diagnostic& d : kf::parseNvrtcLog(log))
        (void)kf::formatDiagnostic(d);
    (void)kf::failedBuildDiagnostics(log, "kernel.cu", "NVRTC_ERROR_COMPILATION");
    std::vector<kf::KernelResources> kernels;
    kf::applyPtxasReport(log, kernels);
    kf::applyPtxDirectives(log, kernels);
    (void)kf::readCubinResources(log); // the same bytes as an ELF file
    return 0;
}
