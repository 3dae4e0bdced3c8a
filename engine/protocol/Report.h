#pragma once
// What every report has (docs/report-schema.md, "Common header"), and the shape entry every
// per-shape record starts with. Value types: the runner's reports are read into them once, and
// the CLI printers, the Runs panel, the gates and the evidence pages read the structs.

#include "engine/core/Result.h"
#include "engine/protocol/Verdict.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kf::protocol {

class Fields;

inline constexpr int kReportSchemaVersion = 1;

/// "%.*g" of `v` with `significant` digits; "nan", "inf", "-inf" for non-finite values. The one
/// number format of report text: the CLI's tables and the Runs panel agree digit for digit.
std::string formatNumber(double v, int significant = 3);
/// "%.*f"; "nan", "inf", "-inf" for non-finite values.
std::string formatFixed(double v, int decimals);

enum class ReportKind { Correctness, Performance, Profile };
/// "correctness", "performance", "profile".
const char* reportKindName(ReportKind k);

struct TaskRef {
    std::string name;
    std::string hash;               ///< of the canonical task JSON
};

struct CandidateRef {
    std::string file;
    std::string sourceHash;
    std::string arch;               ///< "sm_90"
    std::vector<std::string> compileOptions;
    std::map<std::string, std::string> loweredNames;

    /// The "candidate" object of a report header and of a promotion record.
    nlohmann::json toJson() const;
    static CandidateRef read(const Fields& f);
};

/// What the runner says of a GPU both in its hello (DeviceSummary) and in every report's
/// environment, under the same keys.
struct GpuFacts {
    std::string gpu;                ///< "NVIDIA H100 80GB HBM3"
    std::string computeCapability;  ///< "9.0"
    std::int64_t smCount = 0;
    std::int64_t memoryBytes = 0;
    std::int64_t l2Bytes = 0;
    double peakBandwidthGbs = 0;
    double clockMhz = 0;
    double memoryClockMhz = 0;
    std::string driver;             ///< "580.159.04"
    std::int64_t cudaDriverApi = 0; ///< 13000

    /// Adds these keys to the object `j`.
    void writeTo(nlohmann::json& j) const;
    void readFrom(const Fields& f);
};

/// The GPU and the software a report was made with.
struct Environment : GpuFacts {
    std::string nvrtc;
    std::string torch;

    nlohmann::json toJson() const;
    static Environment read(const Fields& f);
};

/// Where a report was made (protocol 3): the client's endpoint and the runner's host and GPU.
/// Inside the signed report; the gates do not read it, the Runs panel and a pool's summary do.
struct Placement {
    std::string endpoint;           ///< the endpoint's name in runners.json ("" for a plain local runner)
    int attempt = 1;
    std::string host;
    std::string gpuUuid;            ///< "GPU-ac7d9fee-…"
    std::string pciBusId;
    std::string visibleDevices;     ///< $CUDA_VISIBLE_DEVICES on the runner

    bool empty() const { return endpoint.empty() && host.empty() && gpuUuid.empty(); }
    /// "box · gpu-host · GPU 1 (GPU-ac7d9fee…)"; "" when empty.
    std::string text() const;
    nlohmann::json toJson() const;
    static Placement read(const Fields& f);
};

/// One round of `kforge verify --repeat N`.
struct RoundTiming {
    std::int64_t round = 0;
    double compileMs = 0;
    double runnerMs = 0;
    double totalMs = 0;
    Verdict verdict = Verdict::Error;
};

struct Header {
    int schemaVersion = kReportSchemaVersion;
    ReportKind kind = ReportKind::Correctness;
    Verdict verdict = Verdict::Error; ///< one of the kind's verdicts (verdictFitsKind)
    std::string summary;
    TaskRef task;
    CandidateRef candidate;
    Environment environment;
    std::string startedAt;
    double durationMs = 0;
    std::optional<Error> error;     ///< what, why, hint: present when verdict is "error"
    std::string mode;               ///< tests | benchmarks | all | custom | repro | shrink
    std::string inputs;             ///< seeded | file
    std::string dumpDir;
    std::vector<std::string> seeds;
    std::vector<RoundTiming> editToVerdict;
    Placement placement;

    bool isError() const { return verdict == Verdict::Error; }
    /// The one pass rule (Verdict.h): pass for correctness, ok for performance and profile.
    bool passed() const { return passes(verdict); }
    /// "vector_add/naive.cu [sm_90] — correctness on NVIDIA H100 80GB HBM3".
    std::string title() const;
    /// "ERROR: why (hint)" for a report whose verdict is "error".
    std::string errorLine() const;
    /// The sentence explaining an error verdict: the error's why, else the summary.
    std::string errorSentence() const;

    /// Writes the header fields into `report` (an object).
    void writeTo(nlohmann::json& report) const;
    /// Reads the header of a report object; `kind` must name one of the three kinds.
    static Header read(const Fields& f);
    /// read(), failing at /kind unless the report is of kind `expected`.
    static Header read(const Fields& f, ReportKind expected);
};

/// A shape entry: the symbol values, a label and the set it came from.
struct ShapeId {
    std::vector<std::pair<std::string, std::int64_t>> dims;  ///< in the report's (sorted) order
    std::string label;
    std::string set;                ///< tests | benchmarks | held_out | custom | repro | shrink

    /// "B=7 D=4099".
    std::string dimsText() const;
    /// "tail (B=7 D=4099)"; with `withSet` " [tests]" after it.
    std::string text(bool withSet) const;
    /// The product of the symbol values (1 for none).
    double size() const;
    /// True when the dims equal `values` exactly (same symbols, same values).
    bool sameDims(const std::map<std::string, std::int64_t, std::less<>>& values) const;

    /// {"B": 7, "D": 4099}: the dims alone, as a report's "shape" and promotion.json keep them.
    nlohmann::json dimsJson() const;
    void writeTo(nlohmann::json& entry) const;
    static ShapeId read(const Fields& entry);
    /// A bare dims object ({"B": 7, "D": 4099}) at `pointer`; throws kf::json::SchemaError.
    static ShapeId readDims(const nlohmann::json& dims, const std::string& pointer);
};

} // namespace kf::protocol
