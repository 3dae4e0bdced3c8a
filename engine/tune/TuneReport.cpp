// The tuner's outcome as JSON (the report `kforge tune --json` prints and the run folder keeps),
// and the winner written back as a candidate of the task.
#include "engine/core/Files.h"
#include "engine/task/TaskEdit.h"
#include "engine/tune/Tuner.h"

#include <cstdio>
#include <filesystem>

namespace kf::tune {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const char* stageName(Stage s)
{
    switch (s) {
    case Stage::NotReached: return "not_reached";
    case Stage::CompileFailed: return "compile_failed";
    case Stage::Pruned: return "pruned";
    case Stage::VerifyFailed: return "verify_failed";
    case Stage::BenchFailed: return "bench_failed";
    case Stage::Timed: return "timed";
    case Stage::Finalist: return "finalist";
    case Stage::Winner: return "winner";
    }
    return "?";
}

namespace {

template <class T>
Json optional(const std::optional<T>& v)
{
    return v ? Json(*v) : Json(nullptr);
}

Json pointJson(const PointResult& p)
{
    Json shapeMs = Json::array();
    for (const auto& v : p.shapeMs)
        shapeMs.push_back(optional(v));
    Json j = {{"point", p.point.toJson()},
              {"label", p.point.label()},
              {"stage", stageName(p.stage)},
              {"compiled", p.compiled},
              {"registers", p.registers},
              {"spill_bytes", p.spillBytes},
              {"occupancy", optional(p.occupancy)},
              {"verified", optional(p.verified)},
              {"rounds", p.rounds},
              {"shape_ms", shapeMs},
              {"geomean_ms", optional(p.geomeanMs)},
              {"speedup_eager", optional(p.speedupEager)},
              {"pct_peak", optional(p.pctPeak)},
              {"remeasure_ms", p.remeasureMs},
              {"final_ms", optional(p.finalMs)}};
    if (!p.reason.empty())
        j["reason"] = p.reason;
    return j;
}

} // namespace

Json Outcome::toJson() const
{
    Json shapesJson = Json::array(), eager = Json::array();
    for (const auto& s : shapes)
        shapesJson.push_back(s.describe());
    for (const auto& e : eagerMs)
        eager.push_back(optional(e));
    Json pts = Json::array();
    for (const auto& p : points)
        pts.push_back(pointJson(p));
    return {{"kind", "tune"},
            {"candidate", candidate},
            {"arch", arch},
            {"shapes", shapesJson},
            {"bytes", bytes},
            {"eager_ms", eager},
            {"peak_gbs", peakGbs},
            {"space", {{"combinations", space.combinations}, {"excluded", space.excluded}, {"sampled_out", space.sampledOut}}},
            {"points", pts},
            {"winner", winner ? Json(points[*winner].point.label()) : Json(nullptr)},
            {"cost",
             {{"points", cost.points},
              {"compiled", cost.compiled},
              {"compile_failed", cost.compileFailed},
              {"pruned", cost.pruned},
              {"verified", cost.verified},
              {"verify_failed", cost.verifyFailed},
              {"timed", cost.timed},
              {"bench_runs", cost.benchRuns},
              {"remeasure_runs", cost.remeasureRuns},
              {"compile_s", cost.compileS},
              {"verify_s", cost.verifyS},
              {"bench_s", cost.benchS},
              {"wall_s", cost.wallS},
              {"budget_spent", cost.budgetSpent}}},
            {"cancelled", cancelled}};
}

std::string winnerDescription(const Outcome& o, const PointResult& w, const std::string& tool)
{
    const auto ms = w.rankMs();
    char figure[64] = "no figure";
    if (ms)
        std::snprintf(figure, sizeof figure, "%.4g ms geomean", *ms);
    return "tuned from " + o.candidate + " (" + w.point.label() + "): " + figure + " over " + std::to_string(o.shapes.size()) +
           " shape(s) on " + o.arch + ", " + tool;
}

std::string tunedFileName(const Task& task, const std::string& file)
{
    const std::string stem = fs::path(file).stem().string();
    for (int n = 1;; ++n) {
        const std::string name = stem + "_tuned" + (n == 1 ? std::string() : std::to_string(n)) + ".cu";
        if (!task.findCandidate(name) && !fs::exists(task.directory / name))
            return name;
    }
}

Result<fs::path> writeBack(const Task& task, const std::string& file, const Point& point, const std::string& newFile,
                           const std::string& description)
{
    const Candidate* c = task.findCandidate(file);
    if (!c)
        return Error::failed("write the tuned candidate", "the task has no candidate " + file);
    auto source = readFileBytes(task.directory / file);
    if (!source)
        return source.error();
    Task one = task;
    one.candidates = {withPoint(*c, point)};
    one.candidates.front().file = newFile;
    one.candidates.front().description = description;
    const Json entry = taskToJson(one)["candidates"][0];
    return appendCandidate(task.directory, newFile, *source, nlohmann::ordered_json::parse(entry.dump()), "add the tuned candidate",
                           "remove or rename " + newFile + ", or tune again");
}

Result<fs::path> writeBack(const Task& task, const std::string& file, const Point& point, const std::string& description)
{
    return writeBack(task, file, point, tunedFileName(task, file), description);
}

} // namespace kf::tune
