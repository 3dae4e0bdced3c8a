#pragma once
// A task compile reads only what the task owns (docs/verification.md, "What a task compile may
// read"): every #include of the candidate, and of the task's headers it reaches, must resolve
// inside the task folder (its include_dirs lie inside it) or the CUDA toolkit's headers. An
// #include of /etc/shadow, of ../outside.h or of a file in the working directory is an error
// diagnostic at its line, before NVRTC opens anything; so is a computed #include (a macro). The
// prelude (<kf/prelude.cuh>) and NVRTC's built-in headers are not files and pass untouched.

#include "engine/compile/Diagnostic.h"

#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct IncludeDirective {
    int line = 0;             ///< 1-based
    int column = 0;           ///< 1-based, of the '#'
    std::string name;         ///< between the quotes or angle brackets; empty when computed
    bool angled = false;
    bool computed = false;    ///< `#include MACRO`
};

/// The #include (and #include_next) directives of `text`, outside comments.
std::vector<IncludeDirective> includeDirectives(std::string_view text);

struct IncludeScope {
    std::vector<std::string> roots;          ///< folders a task compile may read (absolute)
    std::vector<std::string> includeDirs;    ///< -I folders, in order (absolute)
    std::vector<std::string> systemDirs;     ///< the toolkit's include folders (allowed, not scanned)
};

/// Error diagnostics for each #include of `source` (named `fileName`) that would read a file
/// outside `scope`, following the task's own headers (at most 64 deep). Empty when all is well.
std::vector<Diagnostic> includeProblems(std::string_view source, const std::string& fileName, const IncludeScope& scope);

} // namespace kf
