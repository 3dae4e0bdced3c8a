#pragma once
// Source <-> assembly line mapping read from the line info the compiler leaves in its output:
// `.file`/`.loc` directives in PTX built with -lineinfo, and the `//## File "...", line N`
// comments nvdisasm prints with -g or -gi. Code inlined from headers (our prelude `kf/*.cuh`,
// toolkit headers) is attributed to the line of the user's file that called it, so that the
// user sees "this call became these instructions". Pure functions, thread-safe, no Qt.

#include <string>
#include <string_view>
#include <vector>

namespace kf {

/// For each line of an assembly text, the line of the user's source file it came from.
/// Lines are 1-based on both sides; source line 0 means "no line of the user's file" (labels,
/// directives, blank lines, code from a header that was not inlined into the user's code).
struct LineMap {
    /// sourceLineOfAsm[asmLine - 1]; one entry per line of the assembly text.
    std::vector<int> sourceLineOfAsm;

    /// Assembly lines (ascending) whose code came from `sourceLine`; empty when none did.
    std::vector<int> asmLinesFor(int sourceLine) const;
    /// The source line of `asmLine`, 0 when it has none or is out of range.
    int sourceLineFor(int asmLine) const;
    /// Every source line that produced code, ascending, without duplicates.
    std::vector<int> sourceLines() const;
    /// False when the text carried no line info for the user's file at all (built without
    /// -lineinfo, or disassembled by cuobjdump, which prints none).
    bool hasLineInfo() const;
};

/// Maps PTX built with -lineinfo. `sourceFileName` is the CompileRequest::fileName; NVRTC
/// writes it in `.file` made absolute against its working directory, so a name matches a
/// `.file` path that equals it or ends with it at a '/' boundary.
LineMap mapPtxLines(std::string_view ptx, std::string_view sourceFileName);

/// Maps nvdisasm output with `-g` or `-gi`. Only `-gi` names the call site of inlined header
/// code; with `-g` such instructions map to 0 because the output does not say where they
/// were inlined.
LineMap mapSassLines(std::string_view sass, std::string_view sourceFileName);

/// A kernel and the assembly line (1-based) where its code begins.
struct AsmSymbol {
    std::string name;   ///< mangled name, as in CompileResult::kernels
    int line = 0;
};

/// The `.entry` kernels of a PTX text, in order of appearance (`.func` helpers are left out).
std::vector<AsmSymbol> ptxEntries(std::string_view ptx);

/// The functions of an nvdisasm listing (one `.text.<name>` section each), in order.
std::vector<AsmSymbol> sassFunctions(std::string_view sass);

/// True when `pathInOutput` (as the compiler wrote it) names the file `sourceFileName`.
bool sameSourceFile(std::string_view pathInOutput, std::string_view sourceFileName);

} // namespace kf
