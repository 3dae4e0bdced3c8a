#pragma once
// Registry test fixtures that need no GPU: a copy of an example task to edit, and correctness and
// performance reports shaped exactly like the runner's (docs/report-schema.md) for the task's
// current files, so the gates judge them as they would judge a real run. The numbers in them are
// test data; the GPU suite (tests/gpu) promotes from real runs on a real GPU.
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/registry/Registry.h"
#include "engine/protocol/CompileBaseline.h"
#include "engine/protocol/RunReport.h"
#include "engine/protocol/Signature.h"
#include "engine/runner/RunSettings.h"
#include "engine/task/HeldOut.h"
#include "engine/task/Task.h"
#include "testpaths.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace kf::test {

inline const char* kFixtureGpu = "NVIDIA H100 80GB HBM3";

/// Copies resources/examples/<name> into `parent`/<name> and returns the copy's folder.
inline std::filesystem::path copyExample(const std::string& name, const std::filesystem::path& parent)
{
    namespace fs = std::filesystem;
    const fs::path to = parent / name;
    fs::create_directories(to);
    fs::copy(fs::path(KF_SOURCE_DIR) / "resources" / "examples" / name, to,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return to;
}

inline nlohmann::json shapeJson(const ShapeBinding& b)
{
    nlohmann::json s = nlohmann::json::object();
    for (const auto& [k, v] : b.values)
        s[k] = v;
    return s;
}

inline nlohmann::json reportHeader(const Task& task, const std::string& candidate, const char* kind, const std::string& gpu)
{
    const auto source = readFileBytes(task.directory / candidate);
    return {{"schema_version", 1},
            {"kind", kind},
            {"task", {{"name", task.name}, {"hash", taskPayload(task).hash}}},
            {"candidate",
             {{"file", candidate},
              {"source_hash", hashHex(source ? source.value() : std::string())},
              {"arch", "sm_90"},
              {"compile_options", {"--gpu-architecture=sm_90", "-std=c++17", "-lineinfo"}},
              {"lowered_names", nlohmann::json::object()}}},
            {"environment",
             {{"gpu", gpu}, {"compute_capability", "9.0"}, {"sm_count", 132}, {"driver", "580.159.04"},
              {"cuda_driver_api", 13000}, {"nvrtc", "13.0"}, {"torch", "2.11.0"}, {"peak_bandwidth_gbs", 3352.3}}},
            {"started_at", "2026-11-22T05:10:00Z"},
            {"duration_ms", 812.5}};
}

/// The compute-sanitizer section of a `kforge promote` verification on a host with the tool: the
/// four tools ran on the task's sanitize shapes and found nothing.
inline nlohmann::json cleanSanitizerSection(const Task& task)
{
    nlohmann::json shapes = nlohmann::json::array();
    for (const ShapeBinding& b : sanitizeShapes(task))
        shapes.push_back(b.describe());
    nlohmann::json tools = nlohmann::json::array();
    for (const char* t : {"memcheck", "racecheck", "initcheck", "synccheck"})
        tools.push_back({{"tool", t}, {"ran", true}, {"skipped", ""}, {"error", ""}, {"exit_code", 0}, {"duration_ms", 2100},
                         {"findings", 0}, {"truncated", false}, {"ignored", 0}});
    return {{"ran", true}, {"requested", true}, {"reason", ""}, {"tool_version", "2025.3.1.0"},
            {"tool_path", "/usr/local/cuda/bin/compute-sanitizer"}, {"shapes", shapes}, {"seed", "0x9f01"},
            {"duration_ms", 2400}, {"tools", tools}, {"findings", nlohmann::json::array()}};
}

/// A passing correctness report: every test shape and `heldOut` held-out shapes, 3 trials each.
inline nlohmann::json correctnessFor(const Task& task, const std::string& candidate, int heldOut = 2,
                                     const std::string& gpu = kFixtureGpu)
{
    nlohmann::json r = reportHeader(task, candidate, "correctness", gpu);
    r["verdict"] = "pass";
    r["summary"] = "passed every shape";
    r["seeds"] = {"0x9f01", "0x9f02", "0x9f03"};
    r["trials_per_shape"] = 3;
    r["discriminates"] = true;
    nlohmann::json shapes = nlohmann::json::array();
    auto add = [&](const ShapeBinding& b, const char* set) {
        nlohmann::json nc = nlohmann::json::array();
        for (const TensorSpec& o : task.outputs)
            nc.push_back({{"output", o.name}, {"zeros_pass", false}, {"constant_pass", false},
                          {"constant_applicable", true}, {"constant", 0.01}, {"discriminates", true}});
        nlohmann::json trials = nlohmann::json::array();
        nlohmann::json outputs = nlohmann::json::array();
        for (const TensorSpec& o : task.outputs)
            outputs.push_back({{"output", o.name}, {"passed", true}, {"elements", 4096}, {"mismatches", 0}, {"unwritten", 0},
                               {"max_abs_error", 1e-7}, {"max_rel_error", 1e-6}});
        for (int t = 0; t < 3; ++t)
            trials.push_back({{"trial", t}, {"seed", r["seeds"][t]}, {"passed", true}, {"failure", ""},
                              {"launch_error", ""}, {"runs_agree", true}, {"outputs", outputs}});
        shapes.push_back({{"shape", shapeJson(b)}, {"label", b.label}, {"set", set}, {"passed", true},
                          {"negative_control", nc}, {"trials", trials}});
    };
    for (const ShapeBinding& b : task.testShapes)
        add(b, "tests");
    for (const ShapeBinding& b : deriveHeldOutShapes(task, 42, heldOut))
        add(b, "held_out");
    r["shapes"] = shapes;
    r["sanitizer"] = cleanSanitizerSection(task);
    return r;
}

/// An "ok" performance report with one speedup per benchmark shape (`speedups` cycled).
inline nlohmann::json performanceFor(const Task& task, const std::string& candidate,
                                     std::vector<double> speedups = {1.3}, const std::string& gpu = kFixtureGpu)
{
    nlohmann::json r = reportHeader(task, candidate, "performance", gpu);
    r["verdict"] = "ok";
    r["summary"] = "measured every shape";
    nlohmann::json shapes = nlohmann::json::array();
    double logSum = 0;
    bool all1x = true;
    for (size_t i = 0; i < task.benchmarkShapes.size(); ++i) {
        const double s = speedups[i % speedups.size()];
        logSum += std::log(s);
        all1x = all1x && s >= 1.0;
        const double base = 0.1;
        shapes.push_back({{"shape", shapeJson(task.benchmarkShapes[i])},
                          {"label", task.benchmarkShapes[i].label},
                          {"set", "benchmarks"},
                          {"candidate", {{"median_ms", base / s}, {"samples", 50}}},
                          {"baseline", {{"median_ms", base}, {"samples", 50}}},
                          {"speedup", s},
                          {"below_floor", false},
                          {"recheck", {{"checked", 3}, {"passed", true}, {"failure", ""}}},
                          {"flags", nlohmann::json::array()}});
    }
    r["geomean_speedup"] = task.benchmarkShapes.empty() ? 0.0 : std::exp(logSum / double(task.benchmarkShapes.size()));
    r["all_shapes_at_least_1x"] = all1x;
    r["seeds"] = {"0x77"};
    r["shapes"] = shapes;
    return r;
}

/// `p` (a performance report) with a torch.compile comparison merged in as kforge bench merges
/// the harness's result: the harness's faster mode at `factor` x the candidate's median on every
/// shape, eager and candidate as the runner measured them.
inline nlohmann::json withCompile(nlohmann::json p, double factor)
{
    auto bench = protocol::BenchReport::fromJson(p);
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& s : bench.value().shapes) {
        const double cand = *s.candidate.medianMs, eager = *s.baseline.medianMs;
        shapes.push_back({{"label", s.id.text(true)}, {"measured", true},
                          {"eager", {{"median_ms", eager}, {"samples", 20}}},
                          {"candidate", {{"median_ms", cand}, {"samples", 20}}},
                          {"compiled", {{"default", {{"measured", true}, {"compile_s", 0.8}, {"timing", {{"median_ms", cand * factor * 1.03}, {"samples", 20}}}}},
                                        {"max-autotune-no-cudagraphs", {{"measured", true}, {"compile_s", 4.2}, {"timing", {{"median_ms", cand * factor}, {"samples", 20}}}}}}}});
    }
    auto h = protocol::readHarnessResult(nlohmann::json{{"schema_version", 1}, {"measured", true},
                                                        {"modes", {"default", "max-autotune-no-cudagraphs"}},
                                                        {"torch", "2.11.0+cu130"}, {"triton", "3.6.0"}, {"shapes", shapes}}.dump(),
                                         "test fixture");
    protocol::mergeCompileBaseline(p, h.value());
    return p;
}

/// `j` signed with the test key (KF_REPORT_KEY, set by CTest), as the runner signs its reports.
inline nlohmann::json signedAsByRunner(nlohmann::json j)
{
    auto key = protocol::loadSigningKey(true);
    if (key && j.is_object())
        (void)protocol::signDocument(j, key.value());
    return j;
}

/// `j` signed as the runner would sign it, then read as the gates read a report (none for null
/// or a malformed report). Tests that tamper with a report do it before this, so the gates judge
/// the contents; tst_gates tampers after signing to test the signature itself.
inline std::optional<protocol::RunReport> asReport(const nlohmann::json& unsignedJson)
{
    if (unsignedJson.is_null())
        return std::nullopt;
    const nlohmann::json j = signedAsByRunner(unsignedJson);
    auto r = protocol::RunReport::fromJson(j, "fixture report");
    if (!r)
        return std::nullopt;
    return std::move(r.value());
}

/// What a forger does to a signed report without the key: `edit` its document, then the report is
/// read again from the edited bytes (reports are immutable values; the reader checks no signature).
template <class Edit>
inline void forge(std::optional<protocol::RunReport>& report, Edit edit)
{
    if (!report)
        return;
    nlohmann::json j = report->document();
    edit(j);
    auto r = protocol::RunReport::fromJson(j, "forged report");
    report = r ? std::optional<protocol::RunReport>(std::move(r.value())) : std::nullopt;
}

/// The input Registry::promote expects for the task in `taskDir` with passing evidence.
inline PromotionInput passingInput(const std::filesystem::path& taskDir, const std::string& candidate,
                                   std::vector<double> speedups = {1.3}, const std::string& gpu = kFixtureGpu)
{
    auto task = loadTask(taskDir);
    PromotionInput in;
    in.task = task ? task.value() : Task{};
    in.candidateFile = candidate;
    in.correctness = asReport(correctnessFor(in.task, candidate, 2, gpu));
    in.performance = asReport(performanceFor(in.task, candidate, std::move(speedups), gpu));
    in.promotedBy = "test@fixture";
    return in;
}

} // namespace kf::test
