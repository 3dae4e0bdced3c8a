#pragma once
// A verify or bench request, read and checked once (fields in docs/runner-protocol.md and the
// brief of engine/runner/Protocol.h). Every problem is an Error naming the field's JSON pointer,
// so a bad request is answered, never crashed on.

#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kf::device {

struct BenchSettings {
    double timeCapMs = 2000;        ///< per shape, sampling loop only
    int minSamples = 10;
    int maxSamples = 500;
    double targetSpread = 0.01;     ///< half the 95 % CI of the median, relative to the median
    double recheckFraction = 0.05;
    int warmup = 3;
};

/// Where and how much of a failing trial's tensors to save (docs/runner-protocol.md, "dump").
struct DumpSettings {
    std::string dir;                        ///< absolute; one case folder per saved trial inside it
    std::int64_t maxBytes = 4ll << 30;      ///< the whole run's budget; a case that does not fit is skipped
    bool allFailing = false;                ///< false: only each shape's first failing trial
};

/// A profile request's options (docs/runner-protocol.md, "profile").
struct ProfileSettings {
    bool baseline = true;                   ///< profile the LibTorch baseline's kernels too
};

struct ShapeRef {
    ShapeBinding binding;
    std::string set;                ///< "tests", "benchmarks" or "held_out"
};

struct RunRequest {
    std::int64_t id = 0;
    std::string type;               ///< "verify", "bench" or "profile"
    Task task;
    size_t candidateIndex = 0;
    std::string cubin;              ///< decoded ELF bytes
    std::map<std::string, std::string> loweredNames;
    std::string arch;
    std::string sourceHash;
    std::string taskHash;
    std::vector<std::string> compileOptions;
    std::vector<std::uint64_t> seeds;
    int trials = 3;
    std::string shapesMode;         ///< "tests" | "benchmarks" | "all", or the set name of only_shapes
    std::vector<ShapeRef> shapes;   ///< in run order
    int firstTrial = 0;             ///< trial numbers start here (a replayed trial keeps its number and distribution)
    int samples = 10;               ///< mismatches and unwritten indices listed per output
    std::optional<DumpSettings> dump;
    std::string inputsDir;          ///< inputs from <dir>/<name>.npy instead of the seed (a repro run)
    std::int64_t launchTimeoutMs = 10000;
    std::string nvrtcVersion;       ///< optional, echoed into the environment block
    BenchSettings bench;
    ProfileSettings profile;

    const Candidate& candidate() const { return task.candidates[candidateIndex]; }
};

/// Reads a "verify" or "bench" request. Unknown extra keys are ignored (newer supervisors).
Result<RunRequest> parseRunRequest(const nlohmann::json& j);

/// What this runner understands beyond protocol 1's first version; sent in hello "features".
/// A client checks for a feature before using the field, since unknown fields are ignored.
const std::vector<std::string>& runnerFeatures();

/// "0x9f3a..." (16 hex digits).
std::string seedHex(std::uint64_t seed);
/// An independent stream for `salt` under `base` (inputs, guards, sentinels of one trial).
std::uint64_t deriveSeed(std::uint64_t base, std::uint64_t salt);

/// The error sent as fatal when a candidate has lost the CUDA context (a sticky error): the
/// supervisor shows it as the reason the runner restarted. `action` is "run" or "benchmark".
Error lostContextError(const Error& e, const std::string& action, const RunRequest& request, const std::string& where);

} // namespace kf::device
