#include "engine/protocol/ProfileReport.h"
#include "engine/protocol/Verdict.h"

#include "engine/core/JsonReader.h"
#include "engine/protocol/Report.h"
#include "engine/protocol/ReportJson.h"
#include "engine/protocol/MetricCatalog.h"

#include <climits>
#include <cmath>

namespace kf::profile {

using Json = nlohmann::json;
namespace jr = kf::json;

std::optional<double> KernelRecord::metric(std::string_view key) const
{
    // A non-finite counter is no measurement: every reader sees it as missing.
    auto it = metrics.find(std::string(key));
    if (it == metrics.end() || !std::isfinite(it->second))
        return std::nullopt;
    return it->second;
}

namespace {

double metricOr0(const KernelRecord& k, const char* key)
{
    return k.metric(key).value_or(0.0);
}

/// Duration-weighted mean over the kernels that have the metric: a 1 ms kernel at 90 % says more
/// about the side than a 2 us one at 10 %. Kernels without a duration weigh nothing, unless none
/// of them has one; then each counts the same.
std::optional<double> weightedMean(const std::vector<KernelRecord>& kernels, const char* key)
{
    double weighted = 0, weights = 0, plain = 0;
    int count = 0;
    for (const KernelRecord& k : kernels) {
        const std::optional<double> v = k.metric(key);
        if (!v)
            continue;
        plain += *v;
        ++count;
        const double d = metricOr0(k, key::kDuration);
        if (d > 0) {
            weighted += *v * d;
            weights += d;
        }
    }
    if (count == 0)
        return std::nullopt;
    return weights > 0 ? weighted / weights : plain / count;
}

} // namespace

Totals totalsOf(const std::vector<KernelRecord>& kernels)
{
    using namespace key;
    Totals t;
    t.kernels = static_cast<int>(kernels.size());
    for (const KernelRecord& k : kernels) {
        t.hasCounters = t.hasCounters || k.metric(kDuration).has_value();
        t.durationNs += metricOr0(k, kDuration);
        t.dramBytes += metricOr0(k, kDramReadBytes) + metricOr0(k, kDramWriteBytes);
        t.fp32Flops += 2 * metricOr0(k, kFfma) + metricOr0(k, kFadd) + metricOr0(k, kFmul);
        t.fp64Flops += 2 * metricOr0(k, kDfma) + metricOr0(k, kDadd) + metricOr0(k, kDmul);
        t.fp16Flops += 2 * metricOr0(k, kHfma) + metricOr0(k, kHadd) + metricOr0(k, kHmul);
    }
    t.flops = t.fp32Flops + t.fp64Flops + t.fp16Flops;
    t.achievedOccupancyPct = weightedMean(kernels, kAchievedOccupancy);
    t.smThroughputPct = weightedMean(kernels, kSmThroughput);
    t.dramThroughputPct = weightedMean(kernels, kDramThroughput);
    t.memoryThroughputPct = weightedMean(kernels, kMemoryThroughput);
    t.l1HitRatePct = weightedMean(kernels, kL1HitRate);
    t.l2HitRatePct = weightedMean(kernels, kL2HitRate);
    if (t.dramBytes > 0)
        t.arithmeticIntensity = t.flops / t.dramBytes;
    // Per nanosecond, flops are GFLOP/s and bytes are GB/s.
    if (t.durationNs > 0) {
        t.achievedGflops = t.flops / t.durationNs;
        t.achievedDramGbs = t.dramBytes / t.durationNs;
    }
    return t;
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

/// Reports carry finite numbers only; a value we could not measure is written as unknown (0).
double finiteOr0(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

Json staticsToJson(const StaticResources& s)
{
    return {{"registers", s.registers},
            {"static_shared_bytes", s.staticSharedBytes},
            {"local_bytes", s.localBytes},
            {"max_threads_per_block", s.maxThreadsPerBlock},
            {"theoretical_occupancy_pct", finiteOr0(s.theoreticalOccupancyPct)},
            {"limiter", s.limiter},
            {"active_blocks_per_sm", s.activeBlocksPerSm},
            {"active_warps_per_sm", s.activeWarpsPerSm},
            {"max_warps_per_sm", s.maxWarpsPerSm},
            {"blocks_limit",
             {{"warps", s.blocksLimitWarps},
              {"registers", s.blocksLimitRegisters},
              {"shared", s.blocksLimitShared},
              {"blocks", s.blocksLimitBlocks}}}};
}

Json kernelToJson(const KernelRecord& k)
{
    Json metrics = Json::object();
    for (const auto& [name, value] : k.metrics)
        if (std::isfinite(value))
            metrics[name] = value;
    Json j = {{"name", k.name},
              {"demangled", k.demangled},
              {"grid", k.grid},
              {"block", k.block},
              {"dynamic_shared_bytes", k.dynamicSharedBytes},
              {"metrics", std::move(metrics)}};
    if (k.statics.known)
        j["static"] = staticsToJson(k.statics);
    return j;
}

Json totalsToJson(const Totals& t)
{
    Json j = {{"kernels", t.kernels},
              {"duration_ns", t.durationNs},
              {"dram_bytes", t.dramBytes},
              {"fp32_flops", t.fp32Flops},
              {"fp64_flops", t.fp64Flops},
              {"fp16_flops", t.fp16Flops},
              {"flops", t.flops},
              {"arithmetic_intensity", t.arithmeticIntensity},
              {"achieved_gflops", t.achievedGflops},
              {"achieved_dram_gbs", t.achievedDramGbs}};
    auto mean = [&j](const char* name, const std::optional<double>& v) {
        if (v)
            j[name] = *v;
    };
    mean("achieved_occupancy_pct", t.achievedOccupancyPct);
    mean("sm_throughput_pct", t.smThroughputPct);
    mean("dram_throughput_pct", t.dramThroughputPct);
    mean("memory_throughput_pct", t.memoryThroughputPct);
    mean("l1_hit_rate_pct", t.l1HitRatePct);
    mean("l2_hit_rate_pct", t.l2HitRatePct);
    return j;
}

Json sideToJson(const Side& s)
{
    Json kernels = Json::array();
    for (const KernelRecord& k : s.kernels)
        kernels.push_back(kernelToJson(k));
    // Written from the kernels, never from s.totals: the file cannot disagree with itself.
    return {{"kernels", std::move(kernels)}, {"totals", totalsToJson(totalsOf(s.kernels))}};
}

constexpr const char* kHeaderKeys[] = {"task", "candidate", "environment", "started_at", "duration_ms", "error"};

} // namespace

Json ProfileReport::toJson() const
{
    Json j = Json::object();
    for (const char* k : kHeaderKeys)
        if (header.is_object() && header.contains(k))
            j[k] = header[k];
    j["schema_version"] = kSchemaVersion;
    j["kind"] = "profile";
    j["verdict"] = protocol::verdictName(verdict);
    j["summary"] = summary;
    j["shape"] = shape;
    j["label"] = label;
    j["set"] = set;
    j["counters"] = {{"available", counters.available},
                     {"chip", counters.chip},
                     {"passes", counters.passes},
                     {"replay", counters.replay},
                     {"unsupported", counters.unsupported},
                     {"problem", counters.problem},
                     {"how_to_enable", counters.howToEnable}};
    j["ceilings"] = {{"dram_gbs", finiteOr0(ceilings.dramGbs)},
                     {"dram_source", ceilings.dramSource},
                     {"fp32_gflops", finiteOr0(ceilings.fp32Gflops)},
                     {"fp16_tensor_gflops", finiteOr0(ceilings.fp16TensorGflops)}};
    if (candidate || baseline) {
        Json p = Json::object();
        if (candidate)
            p["candidate"] = sideToJson(*candidate);
        if (baseline)
            p["baseline"] = sideToJson(*baseline);
        j["profile"] = std::move(p);
    }
    return j;
}

// ---------------------------------------------------------------------------------------------
// Reading. Strict about the types of the fields we read, silent about fields we do not know:
// a newer runner may add some, and an older reader must still show the rest.

namespace {

/// A report number: a JSON number or one of the strings "nan", "inf", "-inf".
double reportNumber(const Json& v, const std::string& ptr)
{
    return protocol::readNumber(v, ptr);
}

/// A count that fits an int and is not negative.
int count(const Json& v, const std::string& ptr)
{
    const std::int64_t n = jr::asInteger(v, ptr);
    if (n < 0 || n > INT_MAX)
        jr::fail(ptr, "expected a count from 0 to " + std::to_string(INT_MAX) + ", found " + std::to_string(n));
    return static_cast<int>(n);
}

int countOr(jr::Object& o, const char* key, int fallback)
{
    const Json* v = o.optional(key);
    return v ? count(*v, o.at(key)) : fallback;
}

/// A grid or block: CUDA's limits (x below 2^31, y and z at most 65535) also keep the product of
/// the three, KernelRecord::blocks(), inside 64 bits.
std::array<std::int64_t, 3> dims(const Json& v, const std::string& ptr)
{
    if (!v.is_array() || v.size() != 3)
        jr::fail(ptr, "expected three integers [x, y, z], found " + jr::describe(v));
    std::array<std::int64_t, 3> d{};
    for (size_t i = 0; i < 3; ++i) {
        d[i] = jr::asInteger(v[i], jr::child(ptr, i));
        const std::int64_t limit = i == 0 ? INT_MAX : 65535;
        if (d[i] < 0)
            jr::fail(jr::child(ptr, i), "a launch dimension cannot be negative");
        if (d[i] > limit)
            jr::fail(jr::child(ptr, i), "a launch dimension " + std::string(i == 0 ? "x" : i == 1 ? "y" : "z")
                                            + " is at most " + std::to_string(limit) + " in CUDA");
    }
    return d;
}

StaticResources readStatics(jr::Object o)
{
    StaticResources s;
    s.known = true;
    s.registers = count(o.required("registers"), o.at("registers"));
    s.staticSharedBytes = countOr(o, "static_shared_bytes", 0);
    s.localBytes = countOr(o, "local_bytes", 0);
    s.maxThreadsPerBlock = countOr(o, "max_threads_per_block", 0);
    s.theoreticalOccupancyPct = o.number("theoretical_occupancy_pct"); // the calculator's: always finite
    s.limiter = o.string("limiter");
    s.activeBlocksPerSm = countOr(o, "active_blocks_per_sm", 0);
    s.activeWarpsPerSm = countOr(o, "active_warps_per_sm", 0);
    s.maxWarpsPerSm = countOr(o, "max_warps_per_sm", 0);
    if (const Json* limits = o.optional("blocks_limit")) {
        jr::Object l(*limits, o.at("blocks_limit"));
        s.blocksLimitWarps = countOr(l, "warps", 0);
        s.blocksLimitRegisters = countOr(l, "registers", 0);
        s.blocksLimitShared = countOr(l, "shared", 0);
        s.blocksLimitBlocks = countOr(l, "blocks", 0);
    }
    return s;
}

KernelRecord readKernel(jr::Object o)
{
    KernelRecord k;
    k.name = o.string("name");
    if (k.name.empty())
        jr::fail(o.at("name"), "a kernel needs a name");
    k.demangled = o.stringOr("demangled", k.name);
    if (const Json* g = o.optional("grid"))
        k.grid = dims(*g, o.at("grid"));
    if (const Json* b = o.optional("block"))
        k.block = dims(*b, o.at("block"));
    const Json* dyn = o.optional("dynamic_shared_bytes");
    k.dynamicSharedBytes = dyn ? count(*dyn, o.at("dynamic_shared_bytes")) : 0;
    if (const Json* s = o.optional("static"))
        k.statics = readStatics(jr::Object(*s, o.at("static")));
    if (const Json* m = o.optional("metrics")) {
        const jr::Object metrics(*m, o.at("metrics"));
        // Keys outside the catalogue are kept: a newer runner may collect more than we know.
        for (auto it = m->begin(); it != m->end(); ++it) {
            const double v = reportNumber(it.value(), jr::child(metrics.pointer(), it.key()));
            if (std::isfinite(v))
                k.metrics[it.key()] = v;
        }
    }
    return k;
}

Side readSide(jr::Object o, bool needsKernels)
{
    Side side;
    const Json& kernels = jr::asArray(o.required("kernels"), o.at("kernels"));
    if (needsKernels && kernels.empty())
        jr::fail(o.at("kernels"), "the candidate was profiled but lists no kernel");
    for (size_t i = 0; i < kernels.size(); ++i)
        side.kernels.push_back(readKernel(jr::Object(kernels[i], jr::child(o.at("kernels"), i))));
    side.totals = totalsOf(side.kernels);
    return side;
}

CounterStatus readCounters(jr::Object o)
{
    CounterStatus c;
    c.available = jr::asBool(o.required("available"), o.at("available"));
    c.chip = o.stringOr("chip", "");
    c.passes = countOr(o, "passes", 0);
    c.replay = o.stringOr("replay", c.replay);
    if (const Json* u = o.optional("unsupported"))
        c.unsupported = jr::asStringArray(*u, o.at("unsupported"));
    c.problem = o.stringOr("problem", "");
    c.howToEnable = o.stringOr("how_to_enable", "");
    return c;
}

Ceilings readCeilings(jr::Object o)
{
    // An unknown ceiling is 0: the roofline leaves that line out.
    auto ceiling = [&o](const char* key) {
        const Json* v = o.optional(key);
        return v ? finiteOr0(reportNumber(*v, o.at(key))) : 0.0;
    };
    Ceilings c;
    c.dramGbs = ceiling("dram_gbs");
    c.dramSource = o.stringOr("dram_source", "");
    c.fp32Gflops = ceiling("fp32_gflops");
    c.fp16TensorGflops = ceiling("fp16_tensor_gflops");
    return c;
}

/// The header fields other reports share, type-checked and kept verbatim.
Json readHeader(jr::Object& o, bool isError)
{
    Json h = Json::object();
    for (const char* key : {"task", "candidate", "environment"})
        if (const Json* v = o.optional(key)) {
            if (!v->is_object())
                jr::fail(o.at(key), "expected an object, found " + jr::describe(*v));
            h[key] = *v;
        }
    if (const Json* v = o.optional("started_at"))
        h["started_at"] = jr::asString(*v, o.at("started_at"));
    if (const Json* v = o.optional("duration_ms")) {
        reportNumber(*v, o.at("duration_ms"));
        h["duration_ms"] = *v;
    }
    const Json* error = o.optional("error");
    if (isError && !error)
        jr::fail(o.pointer(), "a report with verdict \"error\" needs an \"error\" object saying what went wrong");
    if (error) {
        jr::Object e(*error, o.at("error"));
        e.stringOr("what", "");
        e.stringOr("why", "");
        e.stringOr("hint", "");
        h["error"] = *error;
    }
    return h;
}

ProfileReport readReport(const Json& j)
{
    jr::Object o(j, "");
    const std::int64_t version = jr::asInteger(o.required("schema_version"), o.at("schema_version"));
    if (version != kSchemaVersion)
        jr::fail(o.at("schema_version"), "this build reads profile reports of schema version "
                                             + std::to_string(kSchemaVersion) + ", not " + std::to_string(version));
    const std::string kind = o.string("kind");
    if (kind != "profile")
        jr::fail(o.at("kind"), "not a profile report (kind \"" + kind + "\")");

    ProfileReport r;
    const std::string word = o.string("verdict");
    const std::optional<protocol::Verdict> verdict = protocol::parseVerdict(word);
    if (!verdict || !protocol::verdictFitsKind(*verdict, protocol::ReportKind::Profile))
        jr::fail(o.at("verdict"), "verdict must be \"ok\", \"no_counters\" or \"error\", not \"" + word.substr(0, 40) + "\"");
    r.verdict = *verdict;
    const bool isError = r.verdict == protocol::Verdict::Error;
    r.summary = o.stringOr("summary", "");
    r.header = readHeader(o, isError);

    if (const Json* shape = o.optional("shape")) {
        const jr::Object s(*shape, o.at("shape"));
        for (auto it = shape->begin(); it != shape->end(); ++it)
            r.shape[it.key()] = jr::asInteger(it.value(), jr::child(s.pointer(), it.key()));
    }
    r.label = o.stringOr("label", "");
    r.set = o.stringOr("set", "");

    // An error report may stop anywhere; the others must say what was measured.
    const Json* counters = o.optional("counters");
    if (!counters && !isError)
        jr::fail(o.pointer(), "missing required key \"counters\"");
    if (counters)
        r.counters = readCounters(jr::Object(*counters, o.at("counters")));
    if (const Json* ceilings = o.optional("ceilings"))
        r.ceilings = readCeilings(jr::Object(*ceilings, o.at("ceilings")));

    const Json* profile = o.optional("profile");
    if (!profile && !isError)
        jr::fail(o.pointer(), "missing required key \"profile\"");
    if (profile) {
        jr::Object p(*profile, o.at("profile"));
        const Json* candidate = p.optional("candidate");
        if (!candidate && !isError)
            jr::fail(p.pointer(), "missing required key \"candidate\"");
        if (candidate)
            r.candidate = readSide(jr::Object(*candidate, p.at("candidate")), !isError);
        if (const Json* baseline = p.optional("baseline"))
            r.baseline = readSide(jr::Object(*baseline, p.at("baseline")), false);
    }
    return r;
}

std::string hintFor(const std::string& pointer)
{
    if (pointer == "/schema_version")
        return "profile the kernel again with this version of KernelForge";
    if (pointer == "/kind")
        return "open a report written by `kforge profile` (kind \"profile\")";
    return "the report was edited or written by another KernelForge version; profile the kernel again";
}

} // namespace

Result<ProfileReport> ProfileReport::fromJson(const Json& j, const std::string& source)
{
    try {
        return readReport(j);
    } catch (const jr::SchemaError& e) {
        return Error::inFile(source, e.pointer, "read profile report", e.message, hintFor(e.pointer));
    }
}

protocol::Environment ProfileReport::environment() const
{
    // The header was type-checked on reading; a header built in code may lack the block.
    try {
        if (auto it = header.find("environment"); it != header.end() && it->is_object())
            return protocol::Environment::read(protocol::Fields(*it, "/environment"));
    } catch (const jr::SchemaError&) {
    }
    return {};
}

std::string ProfileReport::gpu() const
{
    return environment().gpu;
}

std::string ProfileReport::arch() const
{
    // "9.0" -> "sm_90", "12.0" -> "sm_120": the SASS architecture of the device that ran.
    const std::string cc = environment().computeCapability;
    const size_t dot = cc.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 >= cc.size())
        return {};
    const std::string major = cc.substr(0, dot), minor = cc.substr(dot + 1);
    for (const std::string& part : {major, minor})
        for (char c : part)
            if (c < '0' || c > '9')
                return {};
    return "sm_" + major + minor;
}

} // namespace kf::profile
