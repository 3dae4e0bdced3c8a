#pragma once
// Inputs and outputs of one NVRTC build. Plain values, JSON round-trippable (the disk cache and
// `kforge compile --json` both use toJson/fromJson; schema in docs/compile-result-schema.md).

#include "engine/analysis/Resources.h"
#include "engine/compile/Diagnostic.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kf {

inline constexpr int kCompileResultSchemaVersion = 1;

struct CompileOptions {
    std::string arch = "sm_90";            ///< real (sm_XX: PTX + cubin) or virtual (compute_XX: PTX only)
    int optLevel = 3;                       ///< ptxas -O level (0..3)
    bool fastMath = false;
    bool lineInfo = true;
    bool ptxasVerbose = true;               ///< -Xptxas -v: needed for spill numbers
    std::string cxxStd = "c++17";
    int maxRegisters = 0;                   ///< -maxrregcount, 0 = unset
    std::vector<std::pair<std::string, std::string>> defines;
    std::vector<std::string> includeDirs;   ///< the user's folders (absolute)
    std::vector<std::string> extraOptions;  ///< passed verbatim to NVRTC

    /// The exact NVRTC option list this produces (toolkit and prelude include handling aside).
    std::vector<std::string> nvrtcArguments() const;
};

struct CompileRequest {
    std::string source;
    std::string fileName = "kernel.cu";     ///< the name diagnostics carry
    CompileOptions options;
    std::vector<std::string> nameExpressions;
    bool wantSass = true;
    /// Folders a task compile may read (the task folder); empty: any (a bare `kforge compile
    /// FILE`). Every #include outside them and the CUDA headers is an error (IncludeScope.h).
    std::vector<std::string> confineIncludesTo;
    /// Where each name expression comes from ("task.json at /candidates/0/launches/1/kernel"): an
    /// expression the source does not define is reported there, not at NVRTC's __nv_name_map.
    std::map<std::string, std::string> nameExpressionOrigins;
};

struct CompileResult {
    bool success = false;                   ///< false when the source has errors
    std::vector<Diagnostic> diagnostics;
    std::string log;                        ///< the raw NVRTC log, kept for the "raw log" view
    std::string ptx;
    std::string cubin;                      ///< empty for virtual architectures
    std::string sass;                       ///< empty when unavailable
    std::string sassUnavailableReason;
    std::map<std::string, std::string> loweredNames; ///< name expression -> mangled name
    std::vector<KernelResources> kernels;
    std::string arch;
    std::string nvrtcVersion;               ///< "13.0"
    std::string cacheKey;
    bool fromCache = false;
    double compileMs = 0.0;                 ///< wall time of this call (a cache hit is the load)

    int errorCount() const;
    int warningCount() const;
};

/// `includeBinaries` puts PTX, cubin (base64) and SASS in the JSON; the CLI leaves them out
/// unless asked, the cache keeps them.
nlohmann::json toJson(const CompileResult& r, bool includeBinaries);
CompileResult compileResultFromJson(const nlohmann::json& j);

/// Cooperative cancellation: NVRTC polls it through its flow callback.
class CancelToken {
public:
    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return m_cancelled.load(std::memory_order_relaxed); }
    /// The flag itself, for code that polls a plain atomic (the model connection).
    const std::atomic<bool>* flag() const { return &m_cancelled; }

private:
    std::atomic<bool> m_cancelled{false};
};

} // namespace kf
