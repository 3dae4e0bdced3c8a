#pragma once
// `kforge verify --export-repro DIR`, `--repro DIR` and `--shrink`: the failing-case tools.
// A repro bundle re-runs one failing trial from its saved inputs; shrink searches for the
// smallest shape that still fails the same way (engine/repro/Repro.h, engine/verify/Shrink.h).

#include "RunnerCommand.h"
#include "engine/protocol/RunReport.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace kf::cli {

class RunnerSession;

/// The runner of --repro and --shrink: --runner-endpoint resolved and the runner started in
/// `session`. The exit code to end with when either fails (the reason is printed).
std::optional<int> startRunner(const RunArgs& args, std::unique_ptr<RunnerSession>& session);

/// Re-runs the bundle at args.repro; exit 1 when it still fails, 0 when it now passes.
int runRepro(const RunArgs& args);

/// Exports the first saved failing case of `report` (its dump_dir) as a bundle in `bundleDir`.
/// Prints what it did; returns false (after printing why) when nothing could be exported.
bool exportFirstCase(const protocol::RunReport& report, const Task& task, const std::string& bundleDir);

/// Shrinks the first failing (or the given) shape of one candidate; exit 1 when a failing
/// shape was found, 0 when nothing fails.
int runShrink(const RunArgs& args);

} // namespace kf::cli
