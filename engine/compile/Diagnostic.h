#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace kf {

/// One compiler message as a value (never a flattened log). Lines and columns are 1-based;
/// column 0 means NVRTC gave no caret for it.
struct Diagnostic {
    enum class Severity { Error, Warning, Remark, Note };
    std::string file;
    int line = 0;
    int column = 0;
    Severity severity = Severity::Error;
    std::string code;         ///< "20" for error #20-D, "177-D" style codes as printed
    std::string message;
    std::string sourceLine;   ///< the echoed source line, when NVRTC printed one
    int ptxLine = 0;          ///< ptxas errors in the generated PTX (inline asm): its line there
    /// Who reported it: empty for the compiler (NVRTC, ptxas); "compute-sanitizer memcheck" for a
    /// finding of a verification's sanitizer step, which the workbench shows beside the compiler's.
    std::string source;
};

std::string_view severityName(Diagnostic::Severity s);

/// Parses an NVRTC program log into diagnostics. Columns come from the caret line NVRTC prints
/// under the echoed source line (tabs in the source expanded the way NVRTC expands them).
/// ptxas "info" lines are not diagnostics; ptxas warnings and errors are (with line 0).
/// A NUL byte ends a line (NVRTC puts one between the front end's and ptxas' parts), and no
/// input, however long or malformed, does more than produce fewer diagnostics.
std::vector<Diagnostic> parseNvrtcLog(std::string_view log);

/// The diagnostics of a build that failed: parseNvrtcLog's, plus, when none of them is an error,
/// one error in `fileName` that quotes the log's own words (or says the log was empty and gives
/// `status`, NVRTC's result). A failed build therefore always has at least one error.
std::vector<Diagnostic> failedBuildDiagnostics(std::string_view log, std::string_view fileName, std::string_view status);

/// `file:line:col: error: message` plus the source line and a caret, like gcc.
std::string formatDiagnostic(const Diagnostic& d);

nlohmann::json toJson(const Diagnostic& d);
Diagnostic diagnosticFromJson(const nlohmann::json& j);

} // namespace kf
