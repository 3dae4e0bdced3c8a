#include "device/runner/RunPlan.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace kf::device {

namespace {

Error planError(std::string why, std::string pointer)
{
    return Error::inFile("request", std::move(pointer), "read the request", std::move(why), "the runner protocol is described in docs/runner-protocol.md");
}

std::string child(const std::string& ptr, size_t i) { return ptr + "/" + std::to_string(i); }

// A binding sent by the client (held-out, repro and shrink shapes): it must be one the task
// admits (every symbol bound, ranges, constraints), with no symbol the task lacks.
Result<void> admitted(const Task& task, const ShapeBinding& b, const std::string& ptr)
{
    for (const auto& [k, v] : b.values)
        if (std::none_of(task.symbols.begin(), task.symbols.end(), [&](const SymbolSpec& s) { return s.name == k; }))
            return planError("the task has no symbol \"" + k + "\"", ptr + "/" + k);
    if (auto ok = task.admits(b); !ok)
        return planError(ok.error().why, ptr);
    return {};
}

} // namespace

Result<RunPlan> planRun(const nlohmann::json& j)
{
    auto request = protocol::RunRequest::fromJson(j);
    if (!request)
        return request.error();
    RunPlan p;
    static_cast<protocol::RunRequest&>(p) = std::move(request.value());

    auto task = parseTask(p.taskJson, "request /task", p.taskDir);
    if (!task)
        return planError(task.error().why, "/task" + task.error().pointer);
    p.task = std::move(task.value());
    bool found = false;
    for (size_t i = 0; i < p.task.candidates.size(); ++i)
        if (p.task.candidates[i].file == p.candidateFile) {
            p.candidateIndex = i;
            found = true;
        }
    if (!found)
        return planError("the task has no candidate \"" + p.candidateFile + "\"", "/candidate");

    p.mode = p.shapes;
    if (!p.onlyShapes.empty()) {
        // Shapes the client chose (a repro, a shrink probe, a profile's one shape): they replace the set.
        for (size_t i = 0; i < p.onlyShapes.size(); ++i) {
            if (auto ok = admitted(p.task, p.onlyShapes[i], child("/only_shapes", i)); !ok)
                return ok.error();
            p.runShapes.push_back({p.onlyShapes[i], p.setName});
        }
        p.mode = p.setName;
    } else {
        if (p.shapes != "benchmarks")
            for (const auto& s : p.task.testShapes)
                p.runShapes.push_back({s, "tests"});
        if (p.shapes != "tests")
            for (const auto& s : p.task.benchmarkShapes)
                p.runShapes.push_back({s, "benchmarks"});
    }
    // Held-out shapes are chosen by the engine at promotion time and never stored in the task.
    for (size_t i = 0; i < p.heldOut.size(); ++i) {
        if (auto ok = admitted(p.task, p.heldOut[i], child("/held_out_shapes", i)); !ok)
            return ok.error();
        p.runShapes.push_back({p.heldOut[i], "held_out"});
    }
    if (p.runShapes.empty())
        return planError(std::string("the task has no ") + (p.shapes == "tests" ? "test" : "benchmark") +
                             " shapes; add some under \"shapes\" in task.json or ask for \"all\"",
                         "/shapes");
    if (p.kind == RunKind::Profile && p.runShapes.size() != 1)
        // One launch per side is replayed pass by pass: the client picks the one shape.
        return planError("a profile runs one shape: give exactly one in only_shapes", p.onlyShapes.empty() ? "/shapes" : "/only_shapes");
    return p;
}

const std::vector<std::string>& runnerFeatures()
{
    static const std::vector<std::string> f = {"dump", "inputs_dir", "only_shapes", "samples", "first_trial", "profile", "heartbeat", "placement", "sanitize", "stage", "dump_stream"};
    return f;
}

std::string seedHex(std::uint64_t seed)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(seed));
    return buf;
}

std::uint64_t deriveSeed(std::uint64_t base, std::uint64_t salt)
{
    auto mix = [](std::uint64_t z) {
        z += 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    return mix(base ^ mix(salt));
}

Error lostContextError(const Error& e, const std::string& action, const RunPlan& plan, const std::string& where)
{
    Error f = e;
    f.what = action + " " + plan.candidate().file + " " + where;
    f.why = e.why + ", in " + where;
    f.hint = "the CUDA context is lost (a sticky error); fix the kernel, the runner restarts for the next request";
    return f;
}

} // namespace kf::device
