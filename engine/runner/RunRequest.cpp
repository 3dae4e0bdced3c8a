#include "engine/runner/RunRequest.h"

#include "engine/core/Base64.h"
#include "engine/core/Files.h"
#include "engine/core/Hash.h"
#include "engine/core/ReportFields.h"
#include "engine/task/HeldOut.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <regex>

namespace kf {

using Json = nlohmann::json;

namespace {

// The report environment for reports we make ourselves: the hello's device and versions.
Json environmentFromHello(const Json& hello)
{
    Json env = Json::object();
    if (hello.is_object()) {
        if (auto d = hello.find("device"); d != hello.end() && d->is_object())
            env.update(*d);
        if (auto v = hello.find("versions"); v != hello.end() && v->is_object())
            env.update(*v);
    }
    return env;
}


} // namespace

Json candidateHeader(const Candidate& candidate, const CompileRequest& request, const CompileResult& result)
{
    return {{"file", candidate.file},
            {"source_hash", hashHex(request.source)},
            {"arch", request.options.arch},
            {"compile_options", request.options.nvrtcArguments()},
            {"lowered_names", result.loweredNames}};
}

Json buildRunRequest(RunKind kind, const TaskPayload& task, const Candidate& candidate, const CompileRequest& request,
                     const CompileResult& result, const std::string& nvrtcVersion, const RunSettings& s)
{
    const bool bench = kind == RunKind::Bench;
    const bool profile = kind == RunKind::Profile;
    const Json header = candidateHeader(candidate, request, result);
    Json r = {{"type", bench ? "bench" : profile ? "profile" : "verify"},
              {"task", task.json},
              {"task_dir", task.directory},
              {"candidate", candidate.file},
              {"cubin", base64Encode(result.cubin)},
              {"lowered_names", result.loweredNames},
              {"arch", request.options.arch},
              {"source_hash", header["source_hash"]},
              {"task_hash", task.hash},
              {"compile_options", header["compile_options"]},
              {"nvrtc", nvrtcVersion},
              {"seeds", freshSeeds(bench || profile ? 1 : s.trials, s.seed)},
              {"trials", bench || profile ? 1 : s.trials},
              {"shapes", s.shapes},
              {"launch_timeout_ms", s.launchTimeoutMs}};
    if (profile) {
        // One shape, chosen by the caller (defaultProfileShape when the user named none).
        r["only_shapes"] = heldOutJson(s.onlyShapes);
        r["set_name"] = s.setName;
        r["profile"] = {{"baseline", s.profileBaseline}};
    } else if (bench) {
        r["time_cap_ms"] = s.timeCapMs;
        r["min_samples"] = s.minSamples;
        r["max_samples"] = s.maxSamples;
        r["target_spread"] = s.targetSpread;
        r["recheck_fraction"] = 0.05;
        r["warmup"] = 3;
    } else {
        if (!s.heldOut.empty())
            r["held_out_shapes"] = heldOutJson(s.heldOut);
        if (!s.onlyShapes.empty()) {
            r["only_shapes"] = heldOutJson(s.onlyShapes);
            r["set_name"] = s.setName;
        }
        if (s.firstTrial != 0)
            r["first_trial"] = s.firstTrial;
        if (s.samples != 10)
            r["samples"] = s.samples;
        if (!s.dumpDir.empty())
            r["dump"] = {{"dir", std::filesystem::absolute(s.dumpDir).lexically_normal().string()},
                         {"max_bytes", s.dumpMaxBytes},
                         {"trials", s.dumpAllFailing ? "all_failing" : "first_failing"}};
        if (!s.inputsDir.empty())
            r["inputs_dir"] = std::filesystem::absolute(s.inputsDir).lexically_normal().string();
    }
    return r;
}

std::optional<ShapeBinding> defaultProfileShape(const Task& task)
{
    for (const auto* set : {&task.benchmarkShapes, &task.testShapes}) {
        const ShapeBinding* best = nullptr;
        std::int64_t most = -1;
        for (const auto& b : *set)
            if (const std::int64_t n = task.totalElements(b); n > most) {
                most = n;
                best = &b;
            }
        if (best)
            return *best;
    }
    return std::nullopt;
}

bool runnerHas(const Json& hello, const std::string& feature)
{
    const Json& f = report::field(hello, "features");
    return f.is_array() && std::find(f.begin(), f.end(), Json(feature)) != f.end();
}

std::string missingRunnerFeature(const Json& hello, const RunSettings& s)
{
    const std::pair<bool, const char*> needs[] = {{!s.onlyShapes.empty(), "only_shapes"},
                                                  {s.firstTrial != 0, "first_trial"},
                                                  {s.samples != 10, "samples"},
                                                  {!s.dumpDir.empty(), "dump"},
                                                  {!s.inputsDir.empty(), "inputs_dir"}};
    for (const auto& [needed, name] : needs)
        if (needed && !runnerHas(hello, name))
            return name;
    return {};
}

Json errorReport(RunKind kind, const Task& task, const std::string& taskHash, const Json& candidateHeader,
                 const Json& hello, const Error& e, const std::string& startedAt, double durationMs)
{
    return {{"schema_version", 1},
            {"kind", kind == RunKind::Bench ? "performance" : kind == RunKind::Profile ? "profile" : "correctness"},
            {"verdict", "error"},
            {"summary", e.why},
            {"task", {{"name", task.name}, {"hash", taskHash}}},
            {"candidate", candidateHeader},
            {"environment", environmentFromHello(hello)},
            {"started_at", startedAt},
            {"duration_ms", durationMs},
            {"error", {{"what", e.what}, {"why", e.why}, {"hint", e.hint}}},
            {"shapes", Json::array()}};
}

std::string archFromHello(const Json& hello)
{
    if (!hello.is_object() || !hello.contains("device") || !hello["device"].is_object())
        return {};
    const Json& d = hello["device"];
    // The runner names the architecture ("arch": "sm_90"); a compute capability ("9.0") or
    // integer major/minor pairs are accepted too.
    if (std::string a = report::text(d, "arch"); std::regex_match(a, std::regex(R"(sm_\d+[a-z]?)")))
        return a;
    if (std::string cc = report::text(d, "compute_capability"); !cc.empty()) {
        std::smatch m;
        if (std::regex_match(cc, m, std::regex(R"((\d+)\.(\d+))")))
            return "sm_" + m[1].str() + m[2].str();
    }
    for (auto [maj, min] : {std::pair{"major", "minor"}, std::pair{"cc_major", "cc_minor"}})
        if (d.contains(maj) && d.contains(min) && d[maj].is_number_integer() && d[min].is_number_integer())
            return "sm_" + std::to_string(d[maj].get<int>()) + std::to_string(d[min].get<int>());
    return {};
}

std::optional<std::uint64_t> parseSeed(const std::string& text)
{
    std::string digits = text;
    if (digits.rfind("0x", 0) == 0 || digits.rfind("0X", 0) == 0)
        digits = digits.substr(2);
    if (digits.empty() || digits.size() > 16)
        return std::nullopt;
    std::uint64_t v = 0;
    for (char c : digits) {
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return std::nullopt;
        v = (v << 4) | static_cast<std::uint64_t>(d);
    }
    return v;
}

std::string seedText(std::uint64_t seed)
{
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(seed));
    return b;
}

std::vector<std::string> freshSeeds(int count, const std::optional<std::uint64_t>& fixed)
{
    std::vector<std::string> seeds;
    std::random_device rd;
    for (int i = 0; i < count; ++i) {
        std::uint64_t s = fixed ? *fixed + static_cast<std::uint64_t>(i) : (std::uint64_t(rd()) << 32) ^ rd();
        seeds.push_back(seedText(s));
    }
    return seeds;
}

} // namespace kf
