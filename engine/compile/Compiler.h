#pragma once
// engine::compile — one NVRTC build: cache first, then NVRTC with our embedded prelude headers,
// diagnostics parsed into values, lowered names, resources from the cubin and the ptxas report,
// SASS when nvdisasm/cuobjdump exist. Thread-safe: any number of threads may compile at once.

#include "engine/compile/CompileCache.h"
#include "engine/compile/CompileTypes.h"
#include "engine/compile/Diagnostic.h"
#include "engine/core/Result.h"

#include <optional>
#include <string>
#include <string_view>

namespace kf {

/// Compiles `request`. A source with errors is a *successful* call whose result has
/// success == false and diagnostics; the Error branch is for environment failures (libnvrtc
/// missing, unknown architecture) and cancellation. `cache` and `cancel` may be null.
Result<CompileResult> compile(const CompileRequest& request, const CompileCache* cache = nullptr,
                              const CancelToken* cancel = nullptr);

/// "13.0", or an error saying libnvrtc could not be loaded and how to fix that.
Result<std::string> nvrtcVersion();

/// Limits on what reaches NVRTC (checked by compile() before the build; a violation is an error
/// diagnostic at its line and column, not a crash of the editor's compiler).
inline constexpr std::size_t kMaxSourceBytes = std::size_t(4) << 20;
inline constexpr std::size_t kMaxIdentifierLength = 4096;
/// Why `source` must not be handed to NVRTC (not UTF-8: checkSourceEncoding in SourceEncoding.h;
/// a giant identifier or file), or nothing.
std::optional<Diagnostic> sourceProblem(std::string_view source, const std::string& fileName);
/// A source NVRTC can read that is still not UTF-8 (Latin-1 bytes in a comment, say): a warning
/// at the first such byte that compile() puts first among the build's diagnostics, or nothing.
std::optional<Diagnostic> sourceWarning(std::string_view source, const std::string& fileName);

/// Where the CUDA toolkit headers were found (for cuda_fp16.h etc.), or empty.
std::string toolkitIncludeDir();

} // namespace kf
