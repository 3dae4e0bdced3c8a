#pragma once
// The compute-sanitizer section of a correctness report (docs/report-schema.md, "sanitizer"): which
// tools ran on which shapes, how long they took, and every finding with its kind, kernel, source
// line, thread and block. The runner fills it from the tools' XML (engine/sanitize/SanitizerXml.h)
// before it signs the report; the client, the gates and the workbench read it here.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf::protocol {

/// One access of a finding: where it happened and by whom (thread/block when the tool names them).
struct SanitizerAccess {
    std::string access;                    ///< "read", "write", "barrier", "" when the tool says none
    std::string kernel;                    ///< the function as the tool prints it ("block_sum", "void shift_add<float>(…)")
    std::string file;                      ///< the source path from line info, or empty
    int line = 0;                          ///< 0 when there is no line info
    std::string pc;                        ///< "0x1e0", or empty
    std::optional<std::array<std::int64_t, 3>> block;
    std::optional<std::array<std::int64_t, 3>> thread;
};

struct SanitizerFinding {
    /// memcheck | racecheck | initcheck | synccheck | shared-poison (our own check: compute-sanitizer
    /// has no tool for shared memory read before it is written; see docs/verification.md).
    std::string tool;
    /// oob_read | oob_write | misaligned | invalid_address | shared_race | uninit_global_read |
    /// uninit_shared_read | barrier_divergent | invalid_barrier | hardware_exception | api_error | leak | other
    std::string kind;
    std::string severity = "error";        ///< error | warning (racecheck's hazards are warnings; both fail)
    std::string description;               ///< the tool's own text ("Invalid __global__ read of size 4 bytes")
    SanitizerAccess where;                 ///< the (first) access
    std::optional<SanitizerAccess> other;  ///< racecheck: the other access of the pair
    std::string space;                     ///< "__global__", "__shared__", … or empty
    std::int64_t size = 0;                 ///< bytes of the access, 0 when unknown
    std::string address;                   ///< "0x7fc234800fa0", or empty
    std::int64_t count = 1;                ///< hazards or repeats the record stands for
    bool hostSide = false;                 ///< a host API record (a cudaMemcpy, a leak), not a kernel's access

    /// "compute-sanitizer racecheck: shared-memory race (write at line 12 / read at line 12) in
    /// block_sum" / "compute-sanitizer memcheck: out-of-bounds read of 4 bytes in shift_add at
    /// oob_read.cu:8, block (3,0,0) thread (231,0,0)". File names are shown without their folder.
    std::string summary() const;
};

struct SanitizerToolRun {
    std::string tool;
    bool ran = false;
    std::string skipped;                   ///< why it did not run ("no shared memory"), else empty
    std::string error;                     ///< why the step failed ("did not finish within 120 s"); an error is not a pass
    int exitCode = 0;
    std::int64_t durationMs = 0;
    std::int64_t findings = 0;             ///< findings of this tool kept in the section
    bool truncated = false;                ///< the tool stopped reporting at its print limit
    std::int64_t ignored = 0;              ///< records outside the candidate's kernels (LibTorch's, host copies)
};

/// The reason of a section whose run did not ask for the tools, on a host that has them.
inline constexpr const char* kSanitizerNotRequested = "not requested";

struct SanitizerSection {
    bool ran = false;                      ///< false: not requested, no tool, or it could not start; `reason` says which
    /// The run asked for the tools (`verify --sanitize`, `kforge promote`). A runner writes a
    /// section into every verify report, asked or not; a section without the field is from a
    /// runner that wrote one only when asked.
    bool requested = true;
    std::string reason;
    /// The tool on the runner's host, written whether it ran or not: empty when the host has none.
    std::string toolVersion;               ///< "2025.3.1.0"
    std::string toolPath;
    std::vector<std::string> shapes;       ///< "N=1000" for each shape the tools ran on
    std::string seed;
    std::int64_t durationMs = 0;
    std::vector<SanitizerToolRun> tools;
    std::vector<SanitizerFinding> findings;

    /// Clean: ran, every tool ran or was skipped for a stated reason, none failed, no finding.
    bool clean() const;
    /// The first finding's summary, else the first tool error, else "".
    std::string firstProblem() const;
    /// The runner's host has compute-sanitizer (the section names its version or path).
    bool toolFound() const { return !toolVersion.empty() || !toolPath.empty(); }
};

nlohmann::json toJson(const SanitizerFinding& f);
nlohmann::json toJson(const SanitizerSection& s);
/// Lenient about presence, strict about types (like the rest of a report): a SchemaError's
/// message names the JSON pointer under `pointer`.
Result<SanitizerSection> sanitizerSectionFromJson(const nlohmann::json& j, const std::string& pointer);
class Fields;
/// The same inside a report being read (throws kf::json::SchemaError like the other readers).
SanitizerSection readSanitizerSection(const Fields& f);

} // namespace kf::protocol
