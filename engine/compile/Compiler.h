#pragma once
// engine::compile — one NVRTC build: cache first, then NVRTC with our embedded prelude headers,
// diagnostics parsed into values, lowered names, resources from the cubin and the ptxas report,
// SASS when nvdisasm/cuobjdump exist. Thread-safe: any number of threads may compile at once.

#include "engine/compile/CompileCache.h"
#include "engine/compile/CompileTypes.h"
#include "engine/core/Result.h"

#include <string>

namespace kf {

/// Compiles `request`. A source with errors is a *successful* call whose result has
/// success == false and diagnostics; the Error branch is for environment failures (libnvrtc
/// missing, unknown architecture) and cancellation. `cache` and `cancel` may be null.
Result<CompileResult> compile(const CompileRequest& request, const CompileCache* cache = nullptr,
                              const CancelToken* cancel = nullptr);

/// "13.0", or an error saying libnvrtc could not be loaded and how to fix that.
Result<std::string> nvrtcVersion();

/// Where the CUDA toolkit headers were found (for cuda_fp16.h etc.), or empty.
std::string toolkitIncludeDir();

} // namespace kf
