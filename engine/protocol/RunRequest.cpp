#include "engine/protocol/RunRequest.h"

#include "engine/core/Base64.h"
#include "engine/core/JsonReader.h"
#include "engine/task/HeldOut.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace kf::protocol {

namespace jr = kf::json;

namespace {

// The staged files under `key`, when the request has them; never beside the folder `dirKey`
// names (`dir`).
std::optional<FileMap> readStagedFiles(jr::Object& o, const char* key, const std::string& dir, const char* dirKey)
{
    const nlohmann::json* files = o.optional(key);
    if (!files)
        return std::nullopt;
    auto map = readFileMap(*files, o.at(key));
    if (!map)
        jr::fail(map.error().pointer, map.error().why);
    if (!dir.empty())
        jr::fail(o.at(key), std::string("give ") + dirKey + " or " + key + ", not both");
    return std::move(map.value());
}

std::vector<ShapeBinding> readBindings(const nlohmann::json& v, const std::string& ptr)
{
    const nlohmann::json& a = jr::asArray(v, ptr);
    if (a.empty() || a.size() > 256)
        jr::fail(ptr, "give between 1 and 256 shapes");
    std::vector<ShapeBinding> out;
    for (size_t i = 0; i < a.size(); ++i) {
        const std::string p = jr::child(ptr, i);
        if (!a[i].is_object())
            jr::fail(p, "expected an object, found " + jr::describe(a[i]));
        ShapeBinding b;
        for (auto it = a[i].begin(); it != a[i].end(); ++it) {
            if (it.key() == "label")
                b.label = jr::asString(it.value(), jr::child(p, "label"));
            else
                b.values[it.key()] = jr::asInteger(it.value(), jr::child(p, it.key()));
        }
        out.push_back(std::move(b));
    }
    return out;
}

std::string absoluteDir(jr::Object& o, std::string_view key)
{
    const std::string dir = o.string(key);
    if (dir.empty() || dir.front() != '/')
        jr::fail(o.at(key), "give an absolute folder path");
    return dir;
}

/// What runs: the kind, the task, the candidate's cubin and how it was built.
void readWhat(jr::Object& o, RunRequest& r)
{
    const std::string type = o.string("type");
    if (type == "verify")
        r.kind = RunKind::Verify;
    else if (type == "bench")
        r.kind = RunKind::Bench;
    else if (type == "profile")
        r.kind = RunKind::Profile;
    else
        jr::fail(o.at("type"), "expected \"verify\", \"bench\" or \"profile\"");
    o.optional("protocol_version"); // checked by parseLine
    r.id = o.integerOr("id", 0);
    r.taskJson = o.required("task");
    if (!r.taskJson.is_object())
        jr::fail(o.at("task"), "expected the task as an object, found " + jr::describe(r.taskJson));
    r.taskDir = o.stringOr("task_dir", "");
    if (auto files = readStagedFiles(o, "task_files", r.taskDir, "task_dir"))
        r.taskFiles = std::move(*files);
    r.candidateFile = o.string("candidate");
    if (!base64Decode(o.string("cubin"), r.cubin) || r.cubin.empty())
        jr::fail(o.at("cubin"), "the cubin is not valid base64 (standard alphabet, '=' padding, no line breaks)");
    if (const nlohmann::json* names = o.optional("lowered_names")) {
        jr::Object n(*names, o.at("lowered_names"));
        for (auto it = names->begin(); it != names->end(); ++it)
            r.loweredNames[it.key()] = jr::asString(it.value(), n.at(it.key()));
    }
    r.arch = o.stringOr("arch", "");
    r.sourceHash = o.stringOr("source_hash", "");
    r.taskHash = o.stringOr("task_hash", "");
    if (const nlohmann::json* opts = o.optional("compile_options"))
        r.compileOptions = jr::asStringArray(*opts, o.at("compile_options"));
    r.nvrtcVersion = o.stringOr("nvrtc", "");
}

/// The seeds, one per trial.
void readTrials(jr::Object& o, RunRequest& r)
{
    const std::vector<std::string> seeds = jr::asStringArray(o.required("seeds"), o.at("seeds"));
    for (size_t i = 0; i < seeds.size(); ++i) {
        auto s = parseSeed(seeds[i]);
        if (!s)
            jr::fail(jr::child(o.at("seeds"), i), "a seed is a hexadecimal string such as \"0x9f31c2\", found \"" + seeds[i] + "\"");
        r.seeds.push_back(*s);
    }
    if (r.seeds.empty())
        jr::fail(o.at("seeds"), "give at least one seed (one per trial)");
    const std::int64_t trials = o.integerOr("trials", r.kind == RunKind::Verify ? 3 : 1);
    if (trials < 1 || trials > 1000)
        jr::fail(o.at("trials"), "trials must be between 1 and 1000");
    if (static_cast<size_t>(trials) > r.seeds.size())
        jr::fail(o.at("seeds"), "give one seed per trial: " + std::to_string(trials) + " trials but " +
                                    std::to_string(r.seeds.size()) + " seeds");
    r.trials = static_cast<int>(trials);
}

/// Which shapes run: the task's sets, a client's own or held-out ones; the first trial's number
/// and the samples kept per output.
void readShapes(jr::Object& o, RunRequest& r)
{
    r.shapes = o.stringOr("shapes", r.kind == RunKind::Verify ? "tests" : "benchmarks");
    if (r.shapes != "tests" && r.shapes != "benchmarks" && r.shapes != "all")
        jr::fail(o.at("shapes"), "expected \"tests\", \"benchmarks\" or \"all\"");
    if (const nlohmann::json* only = o.optional("only_shapes")) {
        r.onlyShapes = readBindings(*only, o.at("only_shapes"));
        r.setName = o.stringOr("set_name", "custom");
        // A profile names the task's set its one shape came from; verify and bench may not, so a
        // client's own shapes can never pass for the task's tests in a correctness report.
        const bool taskSet = r.kind == RunKind::Profile && (r.setName == "tests" || r.setName == "benchmarks");
        if (r.setName != "custom" && r.setName != "repro" && r.setName != "shrink" && !taskSet)
            jr::fail(o.at("set_name"), "expected \"custom\", \"repro\" or \"shrink\"");
    }
    if (const nlohmann::json* held = o.optional("held_out_shapes"))
        r.heldOut = readBindings(*held, o.at("held_out_shapes"));
    r.firstTrial = static_cast<int>(o.integerOr("first_trial", 0));
    if (r.firstTrial < 0 || r.firstTrial > 1000000)
        jr::fail(o.at("first_trial"), "first_trial must be between 0 and 1000000");
    r.samples = static_cast<int>(o.integerOr("samples", r.samples));
    if (r.samples < 1 || r.samples > 1000)
        jr::fail(o.at("samples"), "samples must be between 1 and 1000");
}

/// Failing cases saved, and a repro's inputs from files.
void readCasesAndInputs(jr::Object& o, RunRequest& r)
{
    if (const nlohmann::json* d = o.optional("dump")) {
        jr::Object dump(*d, o.at("dump"));
        DumpSettings s;
        s.dir = absoluteDir(dump, "dir");
        s.maxBytes = dump.integerOr("max_bytes", s.maxBytes);
        if (s.maxBytes < 0 || s.maxBytes > (64ll << 30))
            jr::fail(dump.at("max_bytes"), "max_bytes must be between 0 and 64 GiB");
        const std::string which = dump.stringOr("trials", "first_failing");
        if (which != "first_failing" && which != "all_failing")
            jr::fail(dump.at("trials"), "expected \"first_failing\" or \"all_failing\"");
        s.allFailing = which == "all_failing";
        s.stream = dump.booleanOr("stream", false);
        dump.finish();
        r.dump = s;
    }
    if (o.has("inputs_dir")) {
        r.inputsDir = absoluteDir(o, "inputs_dir");
        // Inputs from files replay one trial of one shape; anything else would reuse them silently.
        if (r.onlyShapes.size() != 1 || r.trials != 1)
            jr::fail(o.at("inputs_dir"), "inputs_dir needs exactly one shape in only_shapes and trials 1");
    }
    if (auto files = readStagedFiles(o, "inputs_files", r.inputsDir, "inputs_dir")) {
        r.inputsFiles = std::move(*files);
        if (r.onlyShapes.size() != 1 || r.trials != 1)
            jr::fail(o.at("inputs_files"), "inputs_files needs exactly one shape in only_shapes and trials 1");
    }
}

/// compute-sanitizer on a verify.
void readSanitize(jr::Object& o, RunRequest& r)
{
    if (const nlohmann::json* p = o.optional("sanitize")) {
        jr::Object so(*p, o.at("sanitize"));
        SanitizeSettings san;
        if (const nlohmann::json* tools = so.optional("tools")) {
            if (!tools->is_array() || tools->empty())
                jr::fail(so.at("tools"), "tools must be a non-empty array of memcheck, racecheck, initcheck, synccheck");
            for (std::size_t i = 0; i < tools->size(); ++i) {
                const std::string t = jr::asString((*tools)[i], so.at("tools") + "/" + std::to_string(i));
                const auto& all = SanitizeSettings::allTools();
                if (std::find(all.begin(), all.end(), t) == all.end())
                    jr::fail(so.at("tools") + "/" + std::to_string(i), "\"" + t + "\" is not memcheck, racecheck, initcheck or synccheck");
                if (std::find(san.tools.begin(), san.tools.end(), t) == san.tools.end())
                    san.tools.push_back(t);
            }
        } else {
            san.tools = SanitizeSettings::allTools();
        }
        if (const nlohmann::json* shapes = so.optional("shapes"))
            san.shapes = readBindings(*shapes, so.at("shapes"));
        san.timeoutMs = so.integerOr("timeout_ms", san.timeoutMs);
        if (san.timeoutMs < 1000 || san.timeoutMs > 3600000)
            jr::fail(so.at("timeout_ms"), "timeout_ms must be between 1000 and 3600000");
        so.finish();
        if (r.kind != RunKind::Verify)
            jr::fail(o.at("sanitize"), "sanitize goes with verify only");
        r.sanitize = std::move(san);
    }
}

/// Where the run is placed, the launch watchdog and profile options.
void readPlacement(jr::Object& o, RunRequest& r)
{
    if (const nlohmann::json* p = o.optional("placement")) {
        jr::Object po(*p, o.at("placement"));
        r.endpoint = po.stringOr("endpoint", "");
        r.attempt = static_cast<int>(po.integerOr("attempt", 1));
        if (r.attempt < 1 || r.attempt > 100)
            jr::fail(po.at("attempt"), "attempt must be between 1 and 100");
        po.finish();
    }
    r.launchTimeoutMs = o.integerOr("launch_timeout_ms", 10000);
    if (r.launchTimeoutMs < 1)
        jr::fail(o.at("launch_timeout_ms"), "launch_timeout_ms must be positive");
    if (const nlohmann::json* p = o.optional("profile")) {
        jr::Object po(*p, o.at("profile"));
        r.profile.baseline = po.booleanOr("baseline", r.profile.baseline);
        po.finish();
    }
}

/// The benchmark's settings (docs/verification.md, timing rules).
void readBench(jr::Object& o, RunRequest& r)
{
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

RunRequest readOrThrow(const nlohmann::json& j)
{
    jr::Object o(j, "");
    RunRequest r;
    readWhat(o, r);
    readTrials(o, r);
    readShapes(o, r);
    readCasesAndInputs(o, r);
    readSanitize(o, r);
    readPlacement(o, r);
    readBench(o, r);
    // Unknown keys are ignored: the client asks hello's features before sending optional ones.
    return r;
}

} // namespace

const char* runKindName(RunKind k)
{
    switch (k) {
    case RunKind::Verify: return "verify";
    case RunKind::Bench: return "bench";
    case RunKind::Profile: return "profile";
    }
    return "verify";
}

nlohmann::json RunRequest::toJson() const
{
    std::vector<std::string> seedTexts;
    for (std::uint64_t s : seeds)
        seedTexts.push_back(seedText(s));
    nlohmann::json r = {{"type", runKindName(kind)},
                        {"id", id},
                        {"task", taskJson},
                        {"candidate", candidateFile},
                        {"cubin", base64Encode(cubin)},
                        {"lowered_names", loweredNames},
                        {"arch", arch},
                        {"source_hash", sourceHash},
                        {"task_hash", taskHash},
                        {"compile_options", compileOptions},
                        {"nvrtc", nvrtcVersion},
                        {"seeds", seedTexts},
                        {"trials", trials},
                        {"shapes", shapes},
                        {"launch_timeout_ms", launchTimeoutMs}};
    // A staged task has no folder the runner could use: its files travel by hash instead.
    if (!taskFiles.empty())
        r["task_files"] = taskFiles;
    else
        r["task_dir"] = taskDir;
    if (!onlyShapes.empty()) {
        r["only_shapes"] = heldOutJson(onlyShapes);
        r["set_name"] = setName;
    }
    if (!heldOut.empty())
        r["held_out_shapes"] = heldOutJson(heldOut);
    if (firstTrial != 0)
        r["first_trial"] = firstTrial;
    if (samples != 10)
        r["samples"] = samples;
    if (dump) {
        r["dump"] = {{"dir", dump->dir}, {"max_bytes", dump->maxBytes}, {"trials", dump->allFailing ? "all_failing" : "first_failing"}};
        if (dump->stream)
            r["dump"]["stream"] = true;
    }
    if (!inputsDir.empty())
        r["inputs_dir"] = inputsDir;
    if (!inputsFiles.empty())
        r["inputs_files"] = inputsFiles;
    if (sanitize)
        r["sanitize"] = {{"tools", sanitize->tools}, {"shapes", heldOutJson(sanitize->shapes)}, {"timeout_ms", sanitize->timeoutMs}};
    if (!endpoint.empty() || attempt != 1)
        r["placement"] = {{"endpoint", endpoint}, {"attempt", attempt}};
    if (kind == RunKind::Profile)
        r["profile"] = {{"baseline", profile.baseline}};
    if (kind == RunKind::Bench) {
        r["time_cap_ms"] = bench.timeCapMs;
        r["min_samples"] = bench.minSamples;
        r["max_samples"] = bench.maxSamples;
        r["target_spread"] = bench.targetSpread;
        r["recheck_fraction"] = bench.recheckFraction;
        r["warmup"] = bench.warmup;
    }
    return r;
}

Result<RunRequest> RunRequest::fromJson(const nlohmann::json& j)
{
    try {
        return readOrThrow(j);
    } catch (const jr::SchemaError& e) {
        return Error::inFile("request", e.pointer, "read the request", e.message, "the runner protocol is described in docs/runner-protocol.md");
    } catch (const nlohmann::json::exception& e) {
        return Error::inFile("request", {}, "read the request", std::string("malformed request: ") + e.what());
    }
}

const std::vector<std::string>& SanitizeSettings::allTools()
{
    static const std::vector<std::string> tools = {"memcheck", "racecheck", "initcheck", "synccheck"};
    return tools;
}

std::string RunRequest::missingFeature(const std::vector<std::string>& features) const
{
    const std::pair<bool, const char*> needs[] = {{!onlyShapes.empty(), "only_shapes"},
                                                  {firstTrial != 0, "first_trial"},
                                                  {samples != 10, "samples"},
                                                  {dump.has_value(), "dump"},
                                                  {!inputsDir.empty(), "inputs_dir"},
                                                  {kind == RunKind::Profile, "profile"},
                                                  {sanitize.has_value(), "sanitize"},
                                                  {!taskFiles.empty() || !inputsFiles.empty(), "stage"},
                                                  {dump && dump->stream, "dump_stream"}};
    for (const auto& [needed, name] : needs)
        if (needed && std::find(features.begin(), features.end(), name) == features.end())
            return name;
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

} // namespace kf::protocol
