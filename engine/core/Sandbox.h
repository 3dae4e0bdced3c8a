#pragma once
// Running code of outside origin (a community problem's Python, docs/reliability.md, "Code we
// did not write") so that it cannot read the user's report signing key, nor anything else of
// theirs we can keep from it:
//  - always: an environment built from an allow-list (no KF_*, no XDG_* pointing at the user's
//    folders), a private home and working folder, memory and CPU limits, and the whole process
//    group killed at the end (engine/core/Process.h), and outside the sandbox every process
//    that still carries the run's marker variable (a daemon that left the group with setsid);
//  - where bubblewrap (`bwrap`) works: no network, its own PID namespace (nothing it starts
//    outlives it), a read-only view of the machine with the user's home, configuration, data
//    and temporary folders replaced by empty ones, the key file by an empty file, and only the
//    private working folder writable.

#include "engine/core/Process.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kf {

struct SandboxSupport {
    bool available = false;
    std::string bwrap;   ///< the program, when found
    std::string why;     ///< when not available: "bwrap is not installed", "bwrap cannot create namespaces here (…)"
};

/// Whether bwrap is there and can create the namespaces we ask for (it is run once, with
/// `true`, on first use; later calls answer from memory).
const SandboxSupport& sandboxSupport();

struct ConfinedOptions {
    std::filesystem::path workDir;               ///< private and writable: the working folder, HOME and TMPDIR live here
    std::vector<std::filesystem::path> readable; ///< what the program must read (its interpreter's prefix, its sources)
    std::vector<std::filesystem::path> hidden;   ///< files to show as empty (the signing key)
    std::vector<std::string> env;                ///< NAME=value beyond the allow-list
    bool sandbox = true;                         ///< false: the fallback even where bwrap works
    int timeoutMs = 600000;
    std::function<bool()> stop;
    std::uint64_t dataBytes = 0;                 ///< 0: half the machine's memory
    std::uint64_t cpuSeconds = 0;                ///< 0: timeout × CPUs
    std::size_t keepBytes = std::size_t(1) << 20;
};

struct ConfinedOutput : ProcessOutput {
    std::uint64_t dataBytes = 0, cpuSeconds = 0;   ///< the limits it ran under
    bool sandboxed = false;
    std::string unsandboxedWhy;   ///< when not sandboxed: why (sandboxSupport().why, or "turned off")
};

/// The environment the program gets: the allow-listed variables of this process (PATH, LANG,
/// LC_*, TZ, the Python and thread-count ones), HOME, TMPDIR and XDG_* inside `workDir`, then
/// `extra`.
std::vector<std::string> confinedEnvironment(const std::filesystem::path& workDir, const std::vector<std::string>& extra);

/// Runs argv in `workDir` confined as above; what it printed, how it ended, and whether bwrap
/// confined it.
Result<ConfinedOutput> runConfined(const std::vector<std::string>& argv, const ConfinedOptions& options);

} // namespace kf
