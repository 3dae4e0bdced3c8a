#include "engine/protocol/Report.h"

#include "engine/protocol/ReportJson.h"

namespace kf::protocol {

namespace jr = kf::json;

const char* reportKindName(ReportKind k)
{
    switch (k) {
    case ReportKind::Correctness: return "correctness";
    case ReportKind::Performance: return "performance";
    case ReportKind::Profile: return "profile";
    }
    return "correctness";
}

void GpuFacts::writeTo(nlohmann::json& j) const
{
    j["gpu"] = gpu;
    j["compute_capability"] = computeCapability;
    j["sm_count"] = smCount;
    j["memory_bytes"] = memoryBytes;
    j["l2_bytes"] = l2Bytes;
    j["peak_bandwidth_gbs"] = numberJson(peakBandwidthGbs);
    j["clock_mhz"] = numberJson(clockMhz);
    j["memory_clock_mhz"] = numberJson(memoryClockMhz);
    j["driver"] = driver;
    j["cuda_driver_api"] = cudaDriverApi;
}

void GpuFacts::readFrom(const Fields& f)
{
    gpu = f.text("gpu");
    computeCapability = f.text("compute_capability");
    smCount = f.integer("sm_count");
    memoryBytes = f.integer("memory_bytes");
    l2Bytes = f.integer("l2_bytes");
    peakBandwidthGbs = f.number("peak_bandwidth_gbs", 0);
    clockMhz = f.number("clock_mhz", 0);
    memoryClockMhz = f.number("memory_clock_mhz", 0);
    driver = f.text("driver");
    cudaDriverApi = f.integer("cuda_driver_api");
}

nlohmann::json Environment::toJson() const
{
    nlohmann::json j = {{"nvrtc", nvrtc}, {"torch", torch}};
    writeTo(j);
    return j;
}

Environment Environment::read(const Fields& f)
{
    Environment e;
    e.readFrom(f);
    e.nvrtc = f.text("nvrtc");
    e.torch = f.text("torch");
    return e;
}

std::string Header::title() const
{
    std::string t = (task.name.empty() ? "?" : task.name) + "/" + (candidate.file.empty() ? "?" : candidate.file);
    if (!candidate.arch.empty())
        t += " [" + candidate.arch + "]";
    t += std::string(" — ") + reportKindName(kind);
    if (!environment.gpu.empty())
        t += " on " + environment.gpu;
    return t;
}

std::string Header::errorSentence() const
{
    if (error && !error->why.empty())
        return error->why;
    return summary.empty() ? "the run could not be done" : summary;
}

std::string Header::errorLine() const
{
    const std::string hint = error ? error->hint : std::string();
    return "ERROR: " + errorSentence() + (hint.empty() ? "" : " (" + hint + ")");
}

nlohmann::json CandidateRef::toJson() const
{
    nlohmann::json lowered = nlohmann::json::object();
    for (const auto& [expr, mangled] : loweredNames)
        lowered[expr] = mangled;
    return {{"file", file}, {"source_hash", sourceHash}, {"arch", arch}, {"compile_options", compileOptions},
            {"lowered_names", lowered}};
}

CandidateRef CandidateRef::read(const Fields& f)
{
    CandidateRef c;
    c.file = f.text("file");
    c.sourceHash = f.text("source_hash");
    c.arch = f.text("arch");
    c.compileOptions = f.texts("compile_options");
    if (const nlohmann::json* names = f.find("lowered_names")) {
        const Fields lowered = f.object("lowered_names");
        for (auto it = names->begin(); it != names->end(); ++it)
            c.loweredNames[it.key()] = jr::asString(it.value(), lowered.at(it.key()));
    }
    return c;
}

void Header::writeTo(nlohmann::json& r) const
{
    r["schema_version"] = schemaVersion;
    r["kind"] = reportKindName(kind);
    r["verdict"] = verdictName(verdict);
    r["summary"] = summary;
    r["task"] = {{"name", task.name}, {"hash", task.hash}};
    r["candidate"] = candidate.toJson();
    r["environment"] = environment.toJson();
    r["started_at"] = startedAt;
    r["duration_ms"] = numberJson(durationMs);
    if (error) {
        r["error"] = {{"what", error->what}, {"why", error->why}, {"hint", error->hint}};
        if (!error->kind.empty())
            r["error"]["kind"] = error->kind;
    }
    if (!mode.empty())
        r["mode"] = mode;
    if (!inputs.empty())
        r["inputs"] = inputs;
    if (!dumpDir.empty())
        r["dump_dir"] = dumpDir;
    if (!seeds.empty())
        r["seeds"] = seeds;
    if (!editToVerdict.empty()) {
        nlohmann::json rounds = nlohmann::json::array();
        for (const RoundTiming& t : editToVerdict)
            rounds.push_back({{"round", t.round},
                              {"compile_ms", numberJson(t.compileMs)},
                              {"runner_ms", numberJson(t.runnerMs)},
                              {"total_ms", numberJson(t.totalMs)},
                              {"verdict", verdictName(t.verdict)}});
        r["edit_to_verdict"] = rounds;
    }
    if (!placement.empty())
        r["placement"] = placement.toJson();
}

namespace {

/// The verdict at `field`, strictly: a word that is not one of `kind`'s verdicts is an error at
/// its pointer (a forged or newer report is refused, never read as a pass).
Verdict readVerdict(const Fields& f, const char* field, ReportKind kind)
{
    const std::string word = f.text(field);
    const std::optional<Verdict> v = parseVerdict(word);
    if (!v || !verdictFitsKind(*v, kind))
        jr::fail(f.at(field), "\"" + word.substr(0, 40) + "\" is not a verdict of a " + reportKindName(kind) +
                                  " report (" + (kind == ReportKind::Correctness   ? "pass, fail or error"
                                                 : kind == ReportKind::Performance ? "ok, fail or error"
                                                                                   : "ok, no_counters or error") +
                                  ")");
    return *v;
}

} // namespace

Header Header::read(const Fields& f, ReportKind expected)
{
    Header h = read(f);
    if (h.kind != expected)
        jr::fail(f.at("kind"), std::string("expected a ") + reportKindName(expected) + " report, found a " +
                                   reportKindName(h.kind) + " report");
    return h;
}

Header Header::read(const Fields& f)
{
    Header h;
    h.schemaVersion = static_cast<int>(f.integer("schema_version", kReportSchemaVersion));
    if (h.schemaVersion != kReportSchemaVersion)
        jr::fail(f.at("schema_version"), "this KernelForge reads report schema version " +
                                             std::to_string(kReportSchemaVersion) + ", not " +
                                             std::to_string(h.schemaVersion));
    const std::string kind = f.text("kind");
    if (kind == "correctness")
        h.kind = ReportKind::Correctness;
    else if (kind == "performance")
        h.kind = ReportKind::Performance;
    else if (kind == "profile")
        h.kind = ReportKind::Profile;
    else
        jr::fail(f.at("kind"), "expected \"correctness\", \"performance\" or \"profile\", found \"" + kind + "\"");
    h.verdict = readVerdict(f, "verdict", h.kind);
    h.summary = f.text("summary");
    const Fields task = f.object("task");
    h.task = {task.text("name"), task.text("hash")};
    h.candidate = CandidateRef::read(f.object("candidate"));
    h.environment = Environment::read(f.object("environment"));
    h.startedAt = f.text("started_at");
    h.durationMs = f.number("duration_ms", 0);
    if (f.find("error")) {
        const Fields e = f.object("error");
        h.error = Error::failed(e.text("what"), e.text("why"), e.text("hint")).withKind(e.text("kind"));
    }
    h.mode = f.text("mode");
    h.inputs = f.text("inputs");
    h.dumpDir = f.text("dump_dir");
    h.seeds = f.texts("seeds");
    f.forEach("edit_to_verdict", [&](const nlohmann::json& v, const std::string& p) {
        const Fields r(v, p);
        h.editToVerdict.push_back({r.integer("round"), r.number("compile_ms", 0), r.number("runner_ms", 0),
                                   r.number("total_ms", 0), readVerdict(r, "verdict", h.kind)});
    });
    if (f.find("placement"))
        h.placement = Placement::read(f.object("placement"));
    return h;
}

std::string Placement::text() const
{
    std::string out = endpoint;
    auto add = [&](const std::string& part) {
        if (part.empty())
            return;
        out += (out.empty() ? "" : " · ") + part;
    };
    add(host);
    std::string gpu;
    if (!visibleDevices.empty())
        gpu = "GPU " + visibleDevices;
    if (!gpuUuid.empty())
        gpu += (gpu.empty() ? "" : " ") + std::string("(") + gpuUuid.substr(0, std::min<std::size_t>(gpuUuid.size(), 12)) + "…)";
    add(gpu);
    if (attempt > 1)
        add("attempt " + std::to_string(attempt));
    return out;
}

nlohmann::json Placement::toJson() const
{
    return {{"endpoint", endpoint}, {"attempt", attempt}, {"host", host}, {"gpu_uuid", gpuUuid},
            {"pci_bus_id", pciBusId}, {"visible_devices", visibleDevices}};
}

Placement Placement::read(const Fields& f)
{
    Placement p;
    p.endpoint = f.text("endpoint");
    p.attempt = static_cast<int>(f.integer("attempt", 1));
    p.host = f.text("host");
    p.gpuUuid = f.text("gpu_uuid");
    p.pciBusId = f.text("pci_bus_id");
    p.visibleDevices = f.text("visible_devices");
    return p;
}

std::string ShapeId::dimsText() const
{
    std::string s;
    for (const auto& [k, v] : dims)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

std::string ShapeId::text(bool withSet) const
{
    const std::string d = dimsText();
    std::string t = label.empty() ? d : d.empty() ? label : label + " (" + d + ")";
    if (withSet && !set.empty())
        t += " [" + set + "]";
    return t;
}

double ShapeId::size() const
{
    double n = 1;
    for (const auto& [k, v] : dims)
        n *= static_cast<double>(v);
    return n;
}

bool ShapeId::sameDims(const std::map<std::string, std::int64_t, std::less<>>& values) const
{
    if (values.size() != dims.size())
        return false;
    for (const auto& [k, v] : dims)
        if (auto it = values.find(k); it == values.end() || it->second != v)
            return false;
    return true;
}

nlohmann::json ShapeId::dimsJson() const
{
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& [k, v] : dims)
        shape[k] = v;
    return shape;
}

void ShapeId::writeTo(nlohmann::json& entry) const
{
    entry["shape"] = dimsJson();
    entry["label"] = label;
    entry["set"] = set;
}

ShapeId ShapeId::readDims(const nlohmann::json& v, const std::string& pointer)
{
    ShapeId s;
    const Fields dims(v, pointer);
    for (auto it = v.begin(); it != v.end(); ++it)
        s.dims.emplace_back(it.key(), jr::asInteger(it.value(), dims.at(it.key())));
    return s;
}

ShapeId ShapeId::read(const Fields& entry)
{
    ShapeId s;
    if (const nlohmann::json* shape = entry.find("shape"))
        s = readDims(*shape, entry.at("shape"));
    s.label = entry.text("label");
    s.set = entry.text("set");
    return s;
}

} // namespace kf::protocol
