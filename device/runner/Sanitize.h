#pragma once
// The compute-sanitizer step of `verify` (docs/verification.md, "compute-sanitizer"). After the
// normal verification, the runner starts one child runner per tool *under* compute-sanitizer
// (`compute-sanitizer --tool T --xml --save T.xml … kforge-runner`), in parallel, and hands each
// the same request cut down to the sanitize shapes, one trial and the first seed. The child
// allocates every buffer at its exact size (KF_RUNNER_EXACT_ALLOC=1), so memcheck sees a read
// past the end; only the candidate's kernels are checked (--kernel-name kne=<lowered name>), so
// LibTorch's are not. The XML is read (engine/sanitize/SanitizerXml.h), host-side records and
// records outside the candidate's kernels are counted as ignored, repeats are merged, and the
// section goes into the report before it is signed. The XML never leaves the runner's host, so
// this works the same through ssh and srun.

#include "device/runner/Channel.h"
#include "device/runner/RunPlan.h"
#include "engine/protocol/SanitizerReport.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kf::device {

/// Runs the tools of `plan.sanitize` for the request `requestJson` (as the client sent it).
protocol::SanitizerSection runSanitizer(Channel& channel, const RunPlan& plan, const nlohmann::json& requestJson);

/// The section of a verify report the tools did not run on: `ran: false`, with compute-sanitizer's
/// version and path when this host has it, so the sanitizer gate can tell "not asked for" from "not
/// there" (docs/registry.md). Not requested: reason "not requested", or "no compute-sanitizer on
/// <host>" when the host has no tool.
protocol::SanitizerSection sectionNotRun(bool requested, const std::string& reason = {});

/// Adds `section` to a correctness report; findings, a tool that failed, or tools that did not
/// run turn a "pass" into "fail" with the first problem as the summary.
void addSanitizerSection(nlohmann::json& report, const protocol::SanitizerSection& section);

} // namespace kf::device
