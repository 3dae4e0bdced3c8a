#pragma once
// Repro bundles: one failing case made portable. A bundle holds the task exactly as it was
// (task.json, every candidate source, include folders, a TorchScript reference: everything the
// task hash covers) and the case folder (inputs, expected and actual outputs). `kforge verify
// --repro DIR` and the workbench re-run it: the inputs come from the files, not the seed,
// because ATen draws different numbers from one seed on different GPUs; the reference is
// recomputed, so the verdict is judged as any verdict is.
//
//   <bundle>/repro.json   what failed, where, and the hashes that tie the copies together
//   <bundle>/task/        the task folder
//   <bundle>/case/        the case folder (engine/verify/CaseFiles.h)

#include "engine/core/Result.h"
#include "engine/task/Task.h"
#include "engine/verify/CaseFiles.h"
#include "engine/verify/Shrink.h"

#include "engine/protocol/VerifyReport.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace kf {

inline constexpr const char* kReproFile = "repro.json";
inline constexpr int kReproSchemaVersion = 1;

struct ReproBundle {
    std::filesystem::path dir;
    std::filesystem::path taskDir;   ///< <dir>/task
    std::filesystem::path caseDir;   ///< <dir>/case
    Task task;                       ///< loaded from taskDir
    CaseInfo kase;
    std::string createdAt;
    FailureKind kind = FailureKind::None;
};

/// <root>/<utc>-<task>-<candidate stem>, created (so two runs in one second get two folders):
/// where a run saves failing tensors. `root` defaults to <cache>/runs; a repro re-run uses
/// <bundle>/reruns.
std::filesystem::path newRunDumpDir(const std::string& task, const std::string& candidateFile,
                                    const std::filesystem::path& root = {});
/// Deletes all but the newest `keep` folders under <cache>/runs, never `inUse` (an open case).
void pruneRunDumpDirs(int keep, const std::filesystem::path& inUse = {});

/// The kind of failure a case records (from its trial report, else from its checks).
FailureKind failureKindOfCase(const CaseInfo& c);

/// Copies the task of `task` and the case at `caseDir` into `bundleDir` (which must not exist
/// or be empty), then writes repro.json last. The case must belong to this task and candidate
/// source as they are now (hashes are compared), so the bundle never pairs a case with edited code.
Result<std::filesystem::path> exportRepro(const std::filesystem::path& caseDir, const Task& task,
                                          const std::filesystem::path& bundleDir);

/// Reads a bundle and checks that its task folder and candidate source still hash to what the
/// case recorded: a bundle edited by hand is refused with the file that changed.
Result<ReproBundle> loadRepro(const std::filesystem::path& bundleDir);

/// How a re-run compares with the bundle.
struct ReproComparison {
    bool reproduced = false;             ///< failed again, with the same kind of failure
    FailureKind kind = FailureKind::None;  ///< the re-run's kind
    bool sameMismatchSet = false;        ///< exactly the same elements are wrong (from the tensor files)
    bool actualBitwiseEqual = false;     ///< the candidate's outputs are byte-for-byte the same
    std::int64_t mismatchesBefore = 0;
    std::int64_t mismatchesNow = 0;
    std::int64_t elementsDiffering = 0;  ///< elements wrong in one run and not the other
    std::int64_t referenceDriftElements = 0;  ///< reference values that changed (another GPU or LibTorch)
    double referenceDriftMax = 0;
    std::string sentence;                ///< one line for terminals and status bars
};

/// Compares the re-run's trial (its report object) and its case folder (empty when the re-run
/// passed and saved nothing) with the bundle.
Result<ReproComparison> compareReproduction(const ReproBundle& bundle, const protocol::Trial& trial,
                                            const std::filesystem::path& rerunCaseDir);
nlohmann::json toJson(const ReproComparison& c);

} // namespace kf
