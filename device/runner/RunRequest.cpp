#include "device/runner/RunRequest.h"

#include "engine/core/Base64.h"
#include "engine/core/JsonReader.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace kf::device {

namespace jr = kf::json;

namespace {

std::uint64_t parseSeed(const std::string& text, const std::string& ptr)
{
    size_t used = 0;
    std::uint64_t v = 0;
    try {
        v = std::stoull(text, &used, 16);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || text[0] == '-')
        jr::fail(ptr, "a seed is a hexadecimal string such as \"0x9f31c2\", found \"" + text + "\"");
    return v;
}

// A binding sent by the client (held-out, repro and shrink shapes): it must be one the task
// admits, with the same checks as a shape written in task.json.
ShapeBinding parseBinding(const jr::Json& v, const std::string& ptr, const Task& task)
{
    jr::Object o(v, ptr);
    ShapeBinding b;
    b.label = o.stringOr("label", "");
    for (const auto& s : task.symbols)
        b.values[s.name] = o.integer(s.name);
    o.finish();
    if (auto ok = task.admits(b); !ok)
        jr::fail(ptr, ok.error().why);
    return b;
}

std::string absoluteDir(jr::Object& o, std::string_view key)
{
    const std::string dir = o.string(key);
    if (dir.empty() || dir.front() != '/')
        jr::fail(o.at(key), "give an absolute folder path");
    return dir;
}

DumpSettings parseDump(const jr::Json& v, const std::string& ptr)
{
    jr::Object o(v, ptr);
    DumpSettings d;
    d.dir = absoluteDir(o, "dir");
    d.maxBytes = o.integerOr("max_bytes", d.maxBytes);
    if (d.maxBytes < 0 || d.maxBytes > (64ll << 30))
        jr::fail(o.at("max_bytes"), "max_bytes must be between 0 and 64 GiB");
    const std::string trials = o.stringOr("trials", "first_failing");
    if (trials != "first_failing" && trials != "all_failing")
        jr::fail(o.at("trials"), "expected \"first_failing\" or \"all_failing\"");
    d.allFailing = trials == "all_failing";
    o.finish();
    return d;
}

RunRequest parseOrThrow(const jr::Json& j)
{
    jr::Object o(j, "");
    RunRequest r;
    r.type = o.string("type");
    if (r.type != "verify" && r.type != "bench" && r.type != "profile")
        jr::fail(o.at("type"), "expected \"verify\", \"bench\" or \"profile\"");
    r.id = o.integerOr("id", 0);

    const std::string taskDir = o.stringOr("task_dir", "");
    auto task = parseTask(o.required("task"), "request /task", taskDir);
    if (!task)
        jr::fail(o.at("task") + task.error().pointer, task.error().why);
    r.task = std::move(task.value());

    const std::string file = o.string("candidate");
    bool found = false;
    for (size_t i = 0; i < r.task.candidates.size(); ++i)
        if (r.task.candidates[i].file == file) {
            r.candidateIndex = i;
            found = true;
        }
    if (!found)
        jr::fail(o.at("candidate"), "the task has no candidate \"" + file + "\"");

    if (!base64Decode(o.string("cubin"), r.cubin) || r.cubin.empty())
        jr::fail(o.at("cubin"), "the cubin is not valid base64 (standard alphabet, '=' padding, no line breaks)");

    if (const jr::Json* names = o.optional("lowered_names")) {
        jr::Object n(*names, o.at("lowered_names"));
        for (auto it = names->begin(); it != names->end(); ++it)
            r.loweredNames[it.key()] = jr::asString(it.value(), n.at(it.key()));
    }
    r.arch = o.stringOr("arch", "");
    r.sourceHash = o.stringOr("source_hash", "");
    r.taskHash = o.stringOr("task_hash", "");
    if (const jr::Json* opts = o.optional("compile_options"))
        r.compileOptions = jr::asStringArray(*opts, o.at("compile_options"));
    r.nvrtcVersion = o.stringOr("nvrtc", "");

    const std::vector<std::string> seeds = jr::asStringArray(o.required("seeds"), o.at("seeds"));
    for (size_t i = 0; i < seeds.size(); ++i)
        r.seeds.push_back(parseSeed(seeds[i], jr::child(o.at("seeds"), i)));
    if (r.seeds.empty())
        jr::fail(o.at("seeds"), "give at least one seed (one per trial)");
    const std::int64_t trials = o.integerOr("trials", r.type == "verify" ? 3 : 1);
    if (trials < 1 || trials > 1000)
        jr::fail(o.at("trials"), "trials must be between 1 and 1000");
    if (static_cast<size_t>(trials) > r.seeds.size())
        jr::fail(o.at("seeds"), "give one seed per trial: " + std::to_string(trials) + " trials but " +
                                    std::to_string(r.seeds.size()) + " seeds");
    r.trials = static_cast<int>(trials);

    r.shapesMode = o.stringOr("shapes", r.type == "verify" ? "tests" : "benchmarks");
    if (r.shapesMode != "tests" && r.shapesMode != "benchmarks" && r.shapesMode != "all")
        jr::fail(o.at("shapes"), "expected \"tests\", \"benchmarks\" or \"all\"");
    if (const jr::Json* only = o.optional("only_shapes")) {
        // Shapes the client chose (a repro, a shrink probe, one row re-run): they replace the set.
        const std::string set = o.stringOr("set_name", "custom");
        // A profile names the task's set its one shape came from; verify and bench may not, so a
        // client's own shapes can never pass for the task's tests in a correctness report.
        const bool taskSet = r.type == "profile" && (set == "tests" || set == "benchmarks");
        if (set != "custom" && set != "repro" && set != "shrink" && !taskSet)
            jr::fail(o.at("set_name"), "expected \"custom\", \"repro\" or \"shrink\"");
        const jr::Json& a = jr::asArray(*only, o.at("only_shapes"));
        if (a.empty() || a.size() > 256)
            jr::fail(o.at("only_shapes"), "give between 1 and 256 shapes");
        for (size_t i = 0; i < a.size(); ++i)
            r.shapes.push_back({parseBinding(a[i], jr::child(o.at("only_shapes"), i), r.task), set});
        r.shapesMode = set;
    } else {
        if (r.shapesMode != "benchmarks")
            for (const auto& s : r.task.testShapes)
                r.shapes.push_back({s, "tests"});
        if (r.shapesMode != "tests")
            for (const auto& s : r.task.benchmarkShapes)
                r.shapes.push_back({s, "benchmarks"});
    }
    // Held-out shapes are chosen by the engine at promotion time and never stored in the task.
    if (const jr::Json* held = o.optional("held_out_shapes")) {
        const jr::Json& a = jr::asArray(*held, o.at("held_out_shapes"));
        for (size_t i = 0; i < a.size(); ++i)
            r.shapes.push_back({parseBinding(a[i], jr::child(o.at("held_out_shapes"), i), r.task), "held_out"});
    }
    r.firstTrial = static_cast<int>(o.integerOr("first_trial", 0));
    if (r.firstTrial < 0 || r.firstTrial > 1000000)
        jr::fail(o.at("first_trial"), "first_trial must be between 0 and 1000000");
    r.samples = static_cast<int>(o.integerOr("samples", r.samples));
    if (r.samples < 1 || r.samples > 1000)
        jr::fail(o.at("samples"), "samples must be between 1 and 1000");
    if (const jr::Json* d = o.optional("dump"))
        r.dump = parseDump(*d, o.at("dump"));
    if (o.has("inputs_dir")) {
        r.inputsDir = absoluteDir(o, "inputs_dir");
        // Inputs from files replay one trial of one shape; anything else would reuse them silently.
        if (!o.has("only_shapes") || r.shapes.size() != 1 || r.trials != 1)
            jr::fail(o.at("inputs_dir"), "inputs_dir needs exactly one shape in only_shapes and trials 1");
    }
    if (r.shapes.empty())
        jr::fail(o.at("shapes"), std::string("the task has no ") + (r.shapesMode == "tests" ? "test" : "benchmark") +
                                     " shapes; add some under \"shapes\" in task.json or ask for \"all\"");

    r.launchTimeoutMs = o.integerOr("launch_timeout_ms", 10000);
    if (r.launchTimeoutMs < 1)
        jr::fail(o.at("launch_timeout_ms"), "launch_timeout_ms must be positive");

    if (r.type == "profile") {
        // One launch per side is replayed pass by pass: the client picks the one shape.
        if (r.shapes.size() != 1)
            jr::fail(o.has("only_shapes") ? o.at("only_shapes") : o.at("shapes"),
                     "a profile runs one shape: give exactly one in only_shapes");
        if (const jr::Json* p = o.optional("profile")) {
            jr::Object po(*p, o.at("profile"));
            r.profile.baseline = po.booleanOr("baseline", r.profile.baseline);
            po.finish();
        }
    }
    if (r.type == "bench") {
        BenchSettings& b = r.bench;
        b.timeCapMs = o.numberOr("time_cap_ms", b.timeCapMs);
        b.minSamples = static_cast<int>(o.integerOr("min_samples", b.minSamples));
        b.maxSamples = static_cast<int>(o.integerOr("max_samples", b.maxSamples));
        b.targetSpread = o.numberOr("target_spread", b.targetSpread);
        b.recheckFraction = o.numberOr("recheck_fraction", b.recheckFraction);
        b.warmup = static_cast<int>(o.integerOr("warmup", b.warmup));
        if (!(b.timeCapMs > 0))
            jr::fail(o.at("time_cap_ms"), "time_cap_ms must be positive");
        if (b.minSamples < 1 || b.maxSamples < b.minSamples || b.maxSamples > 100000)
            jr::fail(o.at("max_samples"), "need 1 <= min_samples <= max_samples <= 100000");
        if (!(b.targetSpread > 0))
            jr::fail(o.at("target_spread"), "target_spread must be positive");
        if (!(b.recheckFraction >= 0 && b.recheckFraction <= 1))
            jr::fail(o.at("recheck_fraction"), "recheck_fraction must be between 0 and 1");
        if (b.warmup < 0 || b.warmup > 1000)
            jr::fail(o.at("warmup"), "warmup must be between 0 and 1000");
    }
    return r;
}

} // namespace

Result<RunRequest> parseRunRequest(const nlohmann::json& j)
{
    try {
        return parseOrThrow(j);
    } catch (const jr::SchemaError& e) {
        return Error{"read the request", e.message, "the runner protocol is described in docs/runner-protocol.md", "request",
                     e.pointer};
    } catch (const nlohmann::json::exception& e) {
        return Error{"read the request", std::string("malformed request: ") + e.what(), "", "request", {}};
    }
}

const std::vector<std::string>& runnerFeatures()
{
    static const std::vector<std::string> f = {"dump", "inputs_dir", "only_shapes", "samples", "first_trial", "profile"};
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

Error lostContextError(const Error& e, const std::string& action, const RunRequest& request, const std::string& where)
{
    Error f = e;
    f.what = action + " " + request.candidate().file + " " + where;
    f.why = e.why + ", in " + where;
    f.hint = "the CUDA context is lost (a sticky error); fix the kernel, the runner restarts for the next request";
    return f;
}

} // namespace kf::device
