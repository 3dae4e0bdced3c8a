#include "engine/profile/Hints.h"

#include "engine/analysis/Occupancy.h"
#include "engine/protocol/MetricCatalog.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace kf::profile {

namespace {

using Severity = Hint::Severity;

// Thresholds, in the terms Nsight Compute's guidance uses.
constexpr double kBusyPct = 80;           ///< a unit this busy is the bound
constexpr double kIdlePct = 40;           ///< both below: nothing is busy, latency rules
constexpr double kLatencyMinNs = 10'000;  ///< shorter runs are ramp-up and tail, not steady state
constexpr double kLaunchBoundNs = 5'000;  ///< about the cost of a launch and its ramp-up
constexpr double kAchievedRatio = 0.75;   ///< achieved below this share of theoretical
constexpr double kMoreBytesRatio = 1.2;
// ptxas hands out registers per warp in units of 256, so a cap is a multiple of 8 per thread;
// below 24 almost every kernel spills, and no launch of <= 2048 threads per SM needs so few.
constexpr int kRegisterStep = 8;
constexpr int kMinRegisterCap = 24;

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...)
{
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
    if (n > 0)
        std::vsnprintf(s.data(), s.size() + 1, fmt, again);
    va_end(again);
    return s;
}

std::string pct(double v)
{
    return format("%.1f %%", v);
}

/// Three significant digits without an exponent for the sizes we print.
std::string sig(double v)
{
    return std::fabs(v) >= 100 ? format("%.0f", v) : format("%.3g", v);
}

std::string bytesText(double b)
{
    if (b >= 1e9)
        return sig(b / 1e9) + " GB";
    if (b >= 1e6)
        return sig(b / 1e6) + " MB";
    if (b >= 1e3)
        return sig(b / 1e3) + " kB";
    return sig(b) + " B";
}

std::string durationText(double ns)
{
    if (ns >= 1e6)
        return sig(ns / 1e6) + " ms";
    if (ns >= 1e3)
        return sig(ns / 1e3) + " us";
    return sig(ns) + " ns";
}

std::string kibText(long long b)
{
    return b % 1024 == 0 ? format("%lld KiB", b / 1024) : format("%.1f KiB", b / 1024.0);
}

/// "copy_vec4" from "copy_vec4(float const*, float*, int)" and "rows<16>" from "void rows<16>(float*)":
/// enough to tell kernels apart.
std::string shortName(const KernelRecord& k)
{
    const std::string& full = k.demangled.empty() ? k.name : k.demangled;
    const std::string n = full.substr(0, full.find('('));
    // A template's demangled name starts with its return type; drop it (a space outside <>).
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i < n.size(); ++i) {
        if (n[i] == '<')
            ++depth;
        else if (n[i] == '>')
            --depth;
        else if (n[i] == ' ' && depth == 0)
            start = i + 1;
    }
    return n.substr(start);
}

struct Context {
    const ProfileReport& report;
    const Side& candidate;
    const Totals& totals;       ///< totalsOf(candidate.kernels), recomputed: a caller may not have kept Side::totals
    const KernelRecord& main;   ///< the longest-running candidate kernel (the first without counters)
    const ArchInfo* arch;       ///< nullptr when the device's architecture is not in our table
    int smCount;                ///< 0 when the report does not say

    /// "copy_vec4: " when the candidate has several kernels, so evidence says which one.
    std::string prefix(const KernelRecord& k) const
    {
        return candidate.kernels.size() > 1 ? shortName(k) + ": " : std::string();
    }
};

Hint hint(const char* id, Severity severity, const char* title, std::string evidence, std::string suggestion)
{
    return Hint{id, severity, title, std::move(evidence), std::move(suggestion)};
}

OccupancyQuery queryOf(const KernelRecord& k)
{
    OccupancyQuery q;
    q.blockSize = static_cast<int>(k.threadsPerBlock());
    q.registersPerThread = k.statics.registers;
    q.staticSharedBytes = k.statics.staticSharedBytes;
    q.dynamicSharedBytes = static_cast<int>(k.dynamicSharedBytes);
    return q;
}

/// Static rules need a launch we can recompute: numbers from the cubin and a known block size.
bool staticsUsable(const KernelRecord& k)
{
    return k.statics.known && k.threadsPerBlock() > 0 && k.threadsPerBlock() <= INT_MAX;
}

std::string occupancyFacts(const StaticResources& s)
{
    return format("%d blocks per SM, %s theoretical occupancy", s.activeBlocksPerSm,
                  pct(s.theoreticalOccupancyPct).c_str());
}

// ---------------------------------------------------------------------------------------------
// Rules, in order of importance within a severity.

void noCounters(const Context& c, std::vector<Hint>& out)
{
    const CounterStatus& s = c.report.counters;
    if (s.available)
        return;
    out.push_back(hint("no-counters", Severity::Warning, "No hardware counters",
                       s.problem.empty() ? "the runner collected no counters" : s.problem,
                       s.howToEnable.empty() ? "only the static numbers below are known" : s.howToEnable));
}

void launchBound(const Context& c, std::vector<Hint>& out)
{
    const Totals& t = c.totals;
    if (!t.hasCounters || t.durationNs <= 0 || t.durationNs >= kLaunchBoundNs)
        return;
    out.push_back(hint("launch-bound", Severity::Warning, "Too short to measure well",
                       format("%s on the GPU for %d kernel%s", durationText(t.durationNs).c_str(), t.kernels,
                              t.kernels == 1 ? "" : "s"),
                       "numbers this short are dominated by launch overhead and ramp-up; profile a larger shape"));
}

void spills(const Context& c, std::vector<Hint>& out)
{
    std::string evidence;
    for (const KernelRecord& k : c.candidate.kernels) {
        if (!k.statics.known || k.statics.localBytes <= 0)
            continue;
        evidence += (evidence.empty() ? "" : "; ") + c.prefix(k)
                    + format("spills: %d B/thread of local memory at %d registers/thread", k.statics.localBytes,
                             k.statics.registers);
    }
    if (evidence.empty())
        return;
    out.push_back(hint("spills", Severity::Warning, "Registers spill to local memory", evidence,
                       "local memory is DRAM behind the L1: keep fewer values live per thread, avoid "
                       "dynamically indexed local arrays, or relax __launch_bounds__ / -maxrregcount"));
}

void moreBytesThanBaseline(const Context& c, std::vector<Hint>& out)
{
    const std::optional<Side>& base = c.report.baseline;
    if (!base)
        return;
    const double mine = c.totals.dramBytes, theirs = totalsOf(base->kernels).dramBytes;
    if (theirs <= 0 || mine <= kMoreBytesRatio * theirs)
        return;
    // With DRAM mostly idle the extra bytes cost little time: worth knowing, not worth acting on first.
    const bool dramMatters = c.totals.dramThroughputPct.value_or(kIdlePct) >= kIdlePct;
    out.push_back(hint("more-bytes-than-baseline", dramMatters ? Severity::Advice : Severity::Info,
                       "Moves more DRAM bytes than the baseline",
                       format("the candidate moves %s to and from DRAM, the baseline %s (%.2fx)",
                              bytesText(mine).c_str(), bytesText(theirs).c_str(), mine / theirs),
                       "the baseline does the same work with fewer bytes: look for a second pass over the input "
                       "or intermediates written to global memory"));
}

void baselineWithoutKernels(const Context& c, std::vector<Hint>& out)
{
    // LibTorch's clone and copy_ are cudaMemcpy on the copy engines: there is nothing for the
    // counters to see, and comparing with an empty side would mislead (run 18 on the H100).
    if (!c.report.baseline || !c.report.baseline->kernels.empty() || !c.report.counters.available)
        return;
    out.push_back(hint("baseline-without-kernels", Severity::Info, "The baseline launched no kernels",
                       format("0 kernel launches in the baseline's profiled call, against the candidate's %d "
                              "(%.3g us on the GPU)",
                              c.totals.kernels, c.totals.durationNs / 1e3),
                       "it used the copy engines (cudaMemcpy, as clone does) or the host: compare the two sides with "
                       "`kforge bench`, which times whatever the baseline does"));
}

void smallGrid(const Context& c, std::vector<Hint>& out)
{
    const std::int64_t blocks = c.main.blocks();
    if (c.smCount <= 0 || blocks <= 0 || blocks >= c.smCount)
        return;
    out.push_back(hint("small-grid", Severity::Advice, "Fewer blocks than SMs",
                       c.prefix(c.main)
                           + format("%lld blocks for %d SMs: %lld SMs idle", static_cast<long long>(blocks), c.smCount,
                                    static_cast<long long>(c.smCount - blocks)),
                       format("give every SM work: split the problem into at least %d blocks", c.smCount)));
}

void achievedBelowTheoretical(const Context& c, std::vector<Hint>& out)
{
    const KernelRecord& k = c.main;
    const std::optional<double> achieved = k.metric(key::kAchievedOccupancy);
    const double theoretical = k.statics.theoreticalOccupancyPct;
    if (!k.statics.known || !achieved || theoretical <= 0 || *achieved >= kAchievedRatio * theoretical)
        return;
    std::string evidence = c.prefix(k) + "achieved occupancy " + pct(*achieved) + " of " + pct(theoretical)
                           + " theoretical";
    std::string suggestion = "warps finish unevenly or wait at barriers: even out the work per block";
    const std::int64_t blocks = k.blocks();
    if (c.smCount > 0 && blocks > 0 && k.statics.activeBlocksPerSm > 0) {
        const double slots = static_cast<double>(c.smCount) * k.statics.activeBlocksPerSm;
        const double waves = blocks / slots;
        // Two decimals, or two significant digits below 0.01 (2 blocks on an H100 is not "0.00 waves").
        evidence += format(waves >= 0.01 ? "; %lld blocks / (%d SMs x %d blocks per SM) = %.2f waves"
                                         : "; %lld blocks / (%d SMs x %d blocks per SM) = %.2g waves",
                           static_cast<long long>(blocks), c.smCount, k.statics.activeBlocksPerSm, waves);
        const double tail = waves - std::floor(waves);
        if (waves < 1)
            suggestion = format(waves >= 0.01 ? "grid smaller than one wave: only %.0f %% of the block slots are ever "
                                                "filled; launch more (or smaller) blocks"
                                              : "grid smaller than one wave: only %.2g %% of the block slots are ever "
                                                "filled; launch more (or smaller) blocks",
                                waves * 100);
        else if (tail > 0 && tail <= 0.5 && waves < 4)
            suggestion = format("tail effect: the last wave fills only %.0f %% of the block slots; size the grid "
                                "to whole waves or give each block less work",
                                tail * 100);
    }
    out.push_back(hint("achieved-below-theoretical", Severity::Advice, "Achieved occupancy well below theoretical",
                       evidence, suggestion));
}

void latencyBound(const Context& c, std::vector<Hint>& out)
{
    const Totals& t = c.totals;
    if (!t.dramThroughputPct || !t.smThroughputPct || *t.dramThroughputPct >= kIdlePct || *t.smThroughputPct >= kIdlePct
        || t.durationNs <= kLatencyMinNs)
        return;
    std::string evidence = "DRAM " + pct(*t.dramThroughputPct) + " and SM " + pct(*t.smThroughputPct) + " of peak over "
                           + durationText(t.durationNs);
    if (t.achievedOccupancyPct)
        evidence += ", achieved occupancy " + pct(*t.achievedOccupancyPct);
    out.push_back(hint("latency-bound", Severity::Advice, "Latency-bound", evidence,
                       "neither memory nor compute is busy: keep more work in flight, with more warps (occupancy) "
                       "or more independent loads per thread (unrolling, vector loads)"));
}

struct LaunchBounds {
    int minBlocks = 0;
    int registers = 0;
    double occupancyPct = 0;
};

/// __launch_bounds__ for one more block per SM than today: the largest register cap (a multiple
/// of the allocation step) with which the occupancy calculator fits that many blocks. Checked
/// with the calculator rather than by division alone, because warps get registers per SM
/// sub-partition and the plain quotient can miss. A larger minimum needs a smaller cap still, so
/// when no cap of kMinRegisterCap or more reaches one more block, none reaches more.
std::optional<LaunchBounds> launchBoundsFor(const ArchInfo& a, const KernelRecord& k)
{
    const StaticResources& s = k.statics;
    const int blocks = s.activeBlocksPerSm + 1;
    OccupancyQuery q = queryOf(k);
    q.maxThreadsPerBlock = q.blockSize;
    if (blocks > a.maxBlocksPerSm || q.blockSize <= 0)
        return std::nullopt;
    const int quotient = a.regsPerSm / (blocks * q.blockSize); // more than this cannot fit `blocks`
    for (int cap = std::min({quotient, s.registers - 1, a.maxRegsPerThread}) / kRegisterStep * kRegisterStep;
         cap >= kMinRegisterCap; cap -= kRegisterStep) {
        q.registersPerThread = cap;
        const Result<Occupancy> o = computeOccupancy(a, q);
        if (!o)
            return std::nullopt;
        if (o->activeBlocksPerSm >= blocks)
            return LaunchBounds{blocks, cap, o->occupancy * 100};
        if (o->limiter != Occupancy::Limiter::Registers)
            return std::nullopt; // shared memory or warp slots stop it first: registers cannot help
    }
    return std::nullopt;
}

void occupancyRegisters(const Context& c, std::vector<Hint>& out)
{
    const KernelRecord& k = c.main;
    const StaticResources& s = k.statics;
    if (!staticsUsable(k) || s.limiter != "registers" || s.theoreticalOccupancyPct >= 100)
        return;
    const long long threads = k.threadsPerBlock();
    std::string evidence = c.prefix(k)
                           + format("%d registers/thread x %lld threads/block: ", s.registers, threads)
                           + occupancyFacts(s);
    std::string suggestion =
        "keep fewer values live per thread (smaller per-thread tiles, fewer unrolled accumulators)";
    if (s.localBytes > 0)
        suggestion = format("the kernel already spills %d B/thread, so capping registers would spill more; ",
                            s.localBytes)
                     + suggestion;
    else if (const std::optional<LaunchBounds> b = c.arch ? launchBoundsFor(*c.arch, k) : std::nullopt)
        suggestion = format("`__launch_bounds__(%lld, %d)` caps registers at %d/thread and allows %s "
                            "(watch for spills)",
                            threads, b->minBlocks, b->registers, pct(b->occupancyPct).c_str());
    out.push_back(hint("occupancy-registers", Severity::Advice, "Occupancy limited by registers", evidence,
                       suggestion));
}

/// The most shared memory per block (whole KiB, static and dynamic together) that still lets
/// `blocks` blocks share an SM, found with the occupancy calculator.
std::optional<int> sharedFor(const ArchInfo& a, OccupancyQuery q, int blocks, int currentBytes)
{
    q.staticSharedBytes = 0; // only the total counts; dynamic memory is not held to the 48 KiB static limit
    int lo = 0, hi = currentBytes / 1024 + 1; // in KiB: lo fits (checked below), hi does not
    q.dynamicSharedBytes = 0;
    const Result<Occupancy> none = computeOccupancy(a, q);
    if (!none || none->activeBlocksPerSm < blocks)
        return std::nullopt; // something other than shared memory stops it first
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        q.dynamicSharedBytes = mid * 1024;
        const Result<Occupancy> o = computeOccupancy(a, q);
        if (o && o->activeBlocksPerSm >= blocks)
            lo = mid;
        else
            hi = mid;
    }
    return lo * 1024;
}

bool isSharedLimiter(const std::string& limiter)
{
    return limiter == "shared_memory" || limiter == "shared memory";
}

void occupancyShared(const Context& c, std::vector<Hint>& out)
{
    const KernelRecord& k = c.main;
    const StaticResources& s = k.statics;
    if (!staticsUsable(k) || !isSharedLimiter(s.limiter) || s.theoreticalOccupancyPct >= 100)
        return;
    const long long total = s.staticSharedBytes + k.dynamicSharedBytes;
    std::string evidence = c.prefix(k)
                           + format("%s of shared memory per block (%s static + %s dynamic): ", kibText(total).c_str(),
                                    kibText(s.staticSharedBytes).c_str(), kibText(k.dynamicSharedBytes).c_str())
                           + occupancyFacts(s);
    std::string suggestion = "use less shared memory per block: smaller tiles or fewer pipeline stages";
    const int more = s.activeBlocksPerSm + 1;
    if (const std::optional<int> fit = c.arch ? sharedFor(*c.arch, queryOf(k), more, static_cast<int>(total))
                                              : std::nullopt) {
        OccupancyQuery q = queryOf(k);
        q.staticSharedBytes = 0;
        q.dynamicSharedBytes = *fit;
        if (const Result<Occupancy> o = computeOccupancy(*c.arch, q))
            suggestion = format("at most %s per block (smaller tiles or fewer pipeline stages) lets %d blocks share "
                                "an SM: %s",
                                kibText(*fit).c_str(), o->activeBlocksPerSm, pct(o->occupancy * 100).c_str());
    }
    out.push_back(hint("occupancy-shared", Severity::Advice, "Occupancy limited by shared memory", evidence,
                       suggestion));
}

void occupancyBlocks(const Context& c, std::vector<Hint>& out)
{
    const KernelRecord& k = c.main;
    const StaticResources& s = k.statics;
    if (!staticsUsable(k) || s.limiter != "blocks" || s.theoreticalOccupancyPct >= 100)
        return;
    const long long threads = k.threadsPerBlock();
    std::string evidence = c.prefix(k)
                           + format("%lld threads/block: an SM holds at most %d blocks, so %d of %d warp slots are "
                                    "used (%s theoretical)",
                                    threads, s.activeBlocksPerSm, s.activeWarpsPerSm, s.maxWarpsPerSm,
                                    pct(s.theoreticalOccupancyPct).c_str());
    std::string suggestion = "launch larger blocks: the block slots run out before the warp slots";
    if (c.arch) {
        // The smallest whole-warp block that fills the SM's threads with its block slots.
        const int perSlot = (c.arch->maxThreadsPerSm + c.arch->maxBlocksPerSm - 1) / c.arch->maxBlocksPerSm;
        const int size = (perSlot + c.arch->warpSize - 1) / c.arch->warpSize * c.arch->warpSize;
        OccupancyQuery q = queryOf(k);
        q.blockSize = size;
        const Result<Occupancy> o = computeOccupancy(*c.arch, q);
        if (o && o->occupancy * 100 > s.theoreticalOccupancyPct)
            suggestion = format("launch blocks of at least %d threads: the block slots run out before the warp "
                                "slots; %d threads allow %s",
                                size, size, pct(o->occupancy * 100).c_str());
    }
    out.push_back(hint("occupancy-blocks", Severity::Advice, "Occupancy limited by blocks per SM", evidence,
                       suggestion));
}

void occupancyBlockSize(const Context& c, std::vector<Hint>& out)
{
    const KernelRecord& k = c.main;
    const StaticResources& s = k.statics;
    if (!staticsUsable(k) || s.limiter != "warps" || s.theoreticalOccupancyPct >= 100)
        return;
    const long long threads = k.threadsPerBlock();
    std::string evidence = c.prefix(k)
                           + format("%lld threads/block: %d blocks per SM fill %d of %d warp slots (%s theoretical)",
                                    threads, s.activeBlocksPerSm, s.activeWarpsPerSm, s.maxWarpsPerSm,
                                    pct(s.theoreticalOccupancyPct).c_str());
    std::string suggestion = "choose a block size that divides the SM's thread slots evenly";
    if (c.arch) {
        // Of the block sizes with the most occupancy for the same registers and shared memory,
        // the one nearest today's (the smaller on a tie): the least rework for the most gain.
        const std::vector<OccupancyPoint> curve = occupancyCurve(*c.arch, queryOf(k));
        const OccupancyPoint* best = nullptr;
        for (const OccupancyPoint& p : curve)
            if (!best || p.occupancy > best->occupancy
                || (p.occupancy == best->occupancy
                    && std::llabs(p.blockSize - threads) < std::llabs(best->blockSize - threads)))
                best = &p;
        if (best && best->occupancy * 100 > s.theoreticalOccupancyPct)
            suggestion = format("blocks of %d threads would allow %s", best->blockSize,
                                pct(best->occupancy * 100).c_str());
    }
    out.push_back(hint("occupancy-block-size", Severity::Advice, "Block size leaves warp slots empty", evidence,
                       suggestion));
}

void dramBound(const Context& c, std::vector<Hint>& out)
{
    const Totals& t = c.totals;
    if (!t.dramThroughputPct || *t.dramThroughputPct < kBusyPct)
        return;
    std::string evidence = "DRAM throughput " + pct(*t.dramThroughputPct) + " of peak: " + sig(t.achievedDramGbs)
                           + " GB/s";
    if (c.report.ceilings.dramGbs > 0)
        evidence += " of " + sig(c.report.ceilings.dramGbs) + " GB/s";
    evidence += ", " + bytesText(t.dramBytes) + " in " + durationText(t.durationNs);
    out.push_back(hint("dram-bound", Severity::Info, "DRAM-bound", evidence,
                       "memory-bound; further gains need fewer bytes (fuse passes, narrower types, reuse from "
                       "shared memory)"));
}

void computeBound(const Context& c, std::vector<Hint>& out)
{
    const Totals& t = c.totals;
    if (!t.smThroughputPct || *t.smThroughputPct < kBusyPct)
        return;
    std::string evidence = "SM throughput " + pct(*t.smThroughputPct) + " of peak";
    if (t.achievedGflops > 0) {
        evidence += ", " + sig(t.achievedGflops / 1000) + " TFLOP/s";
        if (c.report.ceilings.fp32Gflops > 0 && t.fp32Flops >= 0.5 * t.flops)
            evidence += " (fp32 peak " + sig(c.report.ceilings.fp32Gflops / 1000) + " TFLOP/s)";
    }
    out.push_back(hint("compute-bound", Severity::Info, "Compute-bound", evidence,
                       "compute-bound; further gains need fewer or cheaper instructions (tensor cores, lower "
                       "precision, less index arithmetic)"));
}

const KernelRecord* mainKernel(const Side& side)
{
    if (side.kernels.empty())
        return nullptr;
    const KernelRecord* best = &side.kernels.front();
    for (const KernelRecord& k : side.kernels)
        if (k.metric(key::kDuration).value_or(0) > best->metric(key::kDuration).value_or(0))
            best = &k;
    return best;
}

int smCountOf(const ProfileReport& r)
{
    const std::int64_t n = r.environment().smCount;
    return n > 0 && n <= INT_MAX ? static_cast<int>(n) : 0;
}

int rank(Severity s)
{
    switch (s) {
    case Severity::Warning: return 0;
    case Severity::Advice: return 1;
    case Severity::Info: return 2;
    }
    return 3;
}

} // namespace

std::vector<Hint> hintsFor(const ProfileReport& report)
{
    std::vector<Hint> out;
    if (!report.candidate)
        return out;
    const KernelRecord* main = mainKernel(*report.candidate);
    if (!main)
        return out;
    const Totals t = totalsOf(report.candidate->kernels);
    const Context c{report, *report.candidate, t, *main, findArchitecture(report.arch()), smCountOf(report)};

    // Within a severity, this order: numbers that cannot be trusted, then what the launch wastes;
    // achieved occupancy before theoretical (raising the ceiling cannot help while the kernel stays
    // far below it); the bound last, as the summary of where the time goes.
    for (auto rule : {noCounters, launchBound, spills, moreBytesThanBaseline, smallGrid, achievedBelowTheoretical,
                      latencyBound, occupancyRegisters, occupancyShared, occupancyBlocks, occupancyBlockSize,
                      dramBound, computeBound, baselineWithoutKernels})
        rule(c, out);
    std::stable_sort(out.begin(), out.end(),
                     [](const Hint& a, const Hint& b) { return rank(a.severity) < rank(b.severity); });
    return out;
}

} // namespace kf::profile
