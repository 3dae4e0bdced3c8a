#pragma once
// The verify, bench and profile requests (docs/runner-protocol.md, "Requests"): the one struct
// the client fills and writes with toJson(), and the runner reads with fromJson() before it
// resolves the task and shapes against it (device/runner/RunPlan.h). Defaults live here only.

#include "engine/core/Result.h"
#include "engine/protocol/FileTransfer.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kf::protocol {

enum class RunKind { Verify, Bench, Profile };
/// "verify", "bench", "profile".
const char* runKindName(RunKind k);

struct BenchSettings {
    double timeCapMs = 2000;        ///< wall clock per shape: set-up, warm-up, samples, re-checks
    int minSamples = 10;
    int maxSamples = 500;
    double targetSpread = 0.01;     ///< half the 95 % CI of the median, relative to the median
    double recheckFraction = 0.05;
    int warmup = 3;
};

/// Where and how much of a failing trial's tensors to save.
struct DumpSettings {
    std::string dir;                        ///< absolute; one case folder per saved trial inside it
    std::int64_t maxBytes = 2ll << 30;      ///< the whole run's budget; a case that does not fit is skipped
    bool allFailing = false;                ///< false: only each shape's first failing trial
    /// The runner writes the cases into a folder of its own and streams them back as file_chunk
    /// events before the report (feature "dump_stream"): `dir` is then the client's folder, named
    /// in the report but never touched by the runner.
    bool stream = false;
};

struct ProfileSettings {
    bool baseline = true;                   ///< profile the LibTorch baseline's kernels too
};

/// `verify` under compute-sanitizer (docs/verification.md, "compute-sanitizer"): after the normal
/// verification the runner starts one child runner per tool under the tool, on these shapes, one
/// trial, and adds the findings to the report before signing it.
struct SanitizeSettings {
    std::vector<std::string> tools;         ///< memcheck, racecheck, initcheck, synccheck (in that order)
    std::vector<ShapeBinding> shapes;       ///< the smallest test shape and one with a partial tile
    std::int64_t timeoutMs = 120000;        ///< per tool

    /// The four tools, in the order they are reported.
    static const std::vector<std::string>& allTools();
};

struct RunRequest {
    std::int64_t id = 0;
    RunKind kind = RunKind::Verify;
    nlohmann::json taskJson;                ///< task.json as the client canonicalised it
    std::string taskDir;                    ///< where the task's headers and module files are
    /// Instead of taskDir, for a runner that does not share the client's files (feature "stage"):
    /// relative path -> sha256 of every file the task needs, each staged with put_file beforehand.
    FileMap taskFiles;
    std::string candidateFile;              ///< the candidate's file name in the task
    std::string cubin;                      ///< ELF bytes (base64 on the wire)
    std::map<std::string, std::string> loweredNames;
    std::string arch;
    std::string sourceHash;
    std::string taskHash;
    std::vector<std::string> compileOptions;
    std::string nvrtcVersion;               ///< echoed into the report's environment
    std::vector<std::uint64_t> seeds;       ///< one per trial ("0x…" on the wire)
    int trials = 3;
    std::string shapes = "tests";           ///< tests | benchmarks | all
    std::vector<ShapeBinding> onlyShapes;   ///< run these instead (a repro, a shrink probe, a profile's shape)
    std::string setName = "custom";         ///< the set of onlyShapes: custom | repro | shrink (profile: tests | benchmarks)
    std::vector<ShapeBinding> heldOut;      ///< verify: extra shapes run as set "held_out"
    int firstTrial = 0;                     ///< the number of the first trial (a replay keeps its number)
    int samples = 10;                       ///< mismatches and unwritten indices listed per output
    std::optional<DumpSettings> dump;
    std::string inputsDir;                  ///< inputs from <dir>/<name>.npy (one only_shapes entry, one trial)
    FileMap inputsFiles;                    ///< instead of inputsDir, staged: "<name>.npy" -> sha256
    std::int64_t launchTimeoutMs = 10000;   ///< the per-launch watchdog
    BenchSettings bench;
    ProfileSettings profile;
    /// Protocol 3: which endpoint of the client's configuration runs this, and the how-manyth
    /// attempt (a pool restarts a lost endpoint and tries again). Echoed in the report's placement.
    std::string endpoint;
    int attempt = 1;
    std::optional<SanitizeSettings> sanitize;   ///< verify only

    nlohmann::json toJson() const;
    /// Checks every field's type and range; the Error names the JSON pointer. Whether the shapes
    /// fit the task is the runner's check, once it has parsed the task.
    static Result<RunRequest> fromJson(const nlohmann::json& j);
    /// The optional field this request uses that `features` (a hello's) lacks, or empty.
    std::string missingFeature(const std::vector<std::string>& features) const;
};

/// "0x9f3a", "9F3A" -> value; nullopt for anything that is not 1..16 hex digits.
std::optional<std::uint64_t> parseSeed(const std::string& text);
/// "0x9f3a" (no padding).
std::string seedText(std::uint64_t seed);

} // namespace kf::protocol
