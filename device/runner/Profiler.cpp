#include "device/runner/Profiler.h"
#include "engine/protocol/Verdict.h"

#include "device/CudaDriver.h"
#ifndef KF_WITHOUT_CUPTI
#include "device/Cupti.h"
#include "device/RangeProfiler.h"
#endif
#include "device/runner/BufferSet.h"
#include "device/runner/CandidateProgram.h"
#include "device/runner/TorchBridge.h"
#include "engine/analysis/Occupancy.h"
#include "engine/analysis/Resources.h"
#include "engine/protocol/MetricCatalog.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace kf::device {

namespace {

constexpr std::uint64_t kGuardSalt = 0xb3c4ull;
constexpr std::uint64_t kInputSalt = 0x2000ull;
constexpr size_t kMaxBaselineRanges = 256;

std::string pct(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", v);
    return buf;
}

} // namespace

struct Profiler::Shape {
    const ShapeRef* ref = nullptr;
    std::vector<TensorLayout> layout;
    BufferSet inputs, outputs;
    std::unique_ptr<TorchBridge::Reference> reference;
    std::optional<CandidateProgram> program;
    std::vector<BoundLaunch> launches;
};

Profiler::Profiler(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions)
    : RunMode(channel, gpu, request, std::move(versions), "profile")
{
}

Result<void> Profiler::prepare(Shape& s)
{
    if (auto r = enterContext(); !r)
        return r;
    auto program = CandidateProgram::load(m_request, m_gpu.info);
    if (!program)
        return program.error();
    s.program.emplace(std::move(program.value()));

    const ShapeBinding& binding = s.ref->binding;
    const std::uint64_t seed = m_request.seeds.front();
    if (auto r = layOutShape(binding, deriveSeed(seed, kGuardSalt), s.layout, s.outputs); !r)
        return r;
    auto ins = BufferSet::allocate(s.layout, {TensorLayout::Role::Input}, deriveSeed(seed, kGuardSalt + 1), m_stream);
    if (!ins)
        return ins.error();
    s.inputs = std::move(ins.value());

    // Inputs as a benchmark makes them: the first distribution, seeded per input.
    std::map<std::string, RawTensor> raw;
    std::uint64_t i = 0;
    for (const auto& l : s.layout) {
        if (l.role != TensorLayout::Role::Input)
            continue;
        RawTensor t{reinterpret_cast<void*>(s.inputs.find(l.name)->ptr()), l.dtype, l.extents, true};
        if (l.elements > 0)
            if (auto r = TorchBridge::fillInput(t, l.spec->distributions.front(), deriveSeed(deriveSeed(seed, kInputSalt), i)); !r)
                return r;
        raw[l.name] = t;
        ++i;
    }
    TorchBridge::synchronize();
    if (m_request.profile.baseline) {
        auto ref = TorchBridge::prepareReference(m_request.task, raw);
        if (!ref)
            return ref.error();
        s.reference = std::move(ref.value());
    }
    auto pointers = s.outputs.pointers();
    for (const auto& [name, ptr] : s.inputs.pointers())
        pointers[name] = ptr;
    auto bound = s.program->plan().bind(m_request.task, binding, pointers, m_gpu.info);
    if (!bound)
        return bound.error();
    s.launches = std::move(bound.value());
    return {};
}

profile::StaticResources Profiler::staticsOf(const BoundLaunch& launch) const
{
    profile::StaticResources st;
    auto attr = [&](CUfunction_attribute a) {
        int v = 0;
        return KF_CU(cuFuncGetAttribute, &v, a, launch.function) == CUDA_SUCCESS ? v : -1;
    };
    st.registers = attr(CU_FUNC_ATTRIBUTE_NUM_REGS);
    st.staticSharedBytes = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    st.localBytes = attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    st.maxThreadsPerBlock = attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    if (st.registers < 0 || st.staticSharedBytes < 0 || st.localBytes < 0 || st.maxThreadsPerBlock < 0)
        return profile::StaticResources{};
    st.known = true;
    const ArchInfo* arch = findArchitecture(m_gpu.info.arch());
    if (!arch)
        return st;
    OccupancyQuery q;
    q.blockSize = static_cast<int>(launch.block[0] * launch.block[1] * launch.block[2]);
    q.registersPerThread = st.registers;
    q.staticSharedBytes = st.staticSharedBytes;
    q.dynamicSharedBytes = static_cast<int>(launch.sharedBytes);
    q.maxThreadsPerBlock = st.maxThreadsPerBlock;
    if (auto occ = computeOccupancy(*arch, q)) {
        st.theoreticalOccupancyPct = occ->occupancy * 100.0;
        st.limiter = std::string(limiterName(occ->limiter));
        st.activeBlocksPerSm = occ->activeBlocksPerSm;
        st.activeWarpsPerSm = occ->activeWarpsPerSm;
        st.maxWarpsPerSm = occ->maxWarpsPerSm;
        st.blocksLimitWarps = occ->blocksLimitWarps;
        st.blocksLimitRegisters = occ->blocksLimitRegisters;
        st.blocksLimitShared = occ->blocksLimitShared;
        st.blocksLimitBlocks = occ->blocksLimitBlocks;
    }
    return st;
}

profile::Ceilings Profiler::ceilings(const profile::ProfileReport& report) const
{
    profile::Ceilings c;
    // DRAM: what the counters say the memory system peaks at, else the memory clock's figure.
    if (report.candidate)
        for (const auto& k : report.candidate->kernels) {
            auto bpc = k.metric(profile::key::kDramPeakBytesPerCycle);
            auto clock = k.metric(profile::key::kDramClock);
            if (bpc && clock && *bpc > 0 && *clock > 0) {
                c.dramGbs = *bpc * *clock / 1e9;
                c.dramSource = "counters";
                break;
            }
        }
    if (c.dramGbs <= 0 && m_gpu.info.peakBandwidthGBs > 0) {
        c.dramGbs = m_gpu.info.peakBandwidthGBs;
        c.dramSource = "memory clock";
    }
    if (const ArchInfo* arch = findArchitecture(m_gpu.info.arch())) {
        const double smScale = arch->smCount > 0 ? static_cast<double>(m_gpu.info.smCount) / arch->smCount : 1.0;
        c.fp32Gflops = arch->peakFp32Tflops * 1e3 * smScale;
        c.fp16TensorGflops = arch->peakFp16TensorTflops * 1e3 * smScale;
    }
    return c;
}

std::string Profiler::summarize(const profile::ProfileReport& report) const
{
    const auto& t = report.candidate->totals;
    std::string s;
    const auto& k = report.candidate->kernels;
    if (!k.empty() && k.front().statics.known && k.front().statics.theoreticalOccupancyPct > 0 && t.achievedOccupancyPct)
        s = "achieved occupancy " + pct(*t.achievedOccupancyPct) + " of " + pct(k.front().statics.theoreticalOccupancyPct) +
            " theoretical";
    else if (t.achievedOccupancyPct)
        s = "achieved occupancy " + pct(*t.achievedOccupancyPct);
    if (t.dramThroughputPct)
        s += (s.empty() ? "" : "; ") + std::string("DRAM ") + pct(*t.dramThroughputPct) + " of peak";
    if (t.smThroughputPct)
        s += ", SM " + pct(*t.smThroughputPct);
    s += "; " + formatNumber(t.durationNs / 1e3) + " us on the GPU";
    if (report.baseline && report.baseline->totals.durationNs > 0)
        s += " (baseline " + formatNumber(report.baseline->totals.durationNs / 1e3) + " us in " +
             std::to_string(report.baseline->totals.kernels) + (report.baseline->totals.kernels == 1 ? " kernel)" : " kernels)");
    return s;
}

Result<void> Profiler::launchCandidate(const Shape& s)
{
    for (const auto& l : s.layout)
        if (l.role == TensorLayout::Role::Scratch && l.zero && l.bytes > 0)
            KF_CU_CHECK(cuMemsetD8Async, s.outputs.find(l.name)->ptr(), 0, l.bytes, m_stream);
    for (const BoundLaunch& l : s.launches)
        if (auto r = LaunchPlan::enqueue(l, m_stream); !r)
            return r;
    return {};
}

Result<void> Profiler::synced(const std::function<Result<void>()>& body, const std::string& what, std::int64_t timeoutMs)
{
    m_channel.launchBegin(m_request.id, what + " " + m_where, timeoutMs);
    Result<void> r = body();
    const CUresult sync = KF_CU(cuCtxSynchronize);
    m_channel.launchEnd(m_request.id);
    if (!r)
        return r;
    if (sync != CUDA_SUCCESS)
        return cuError(sync, "cuCtxSynchronize", __FILE__, __LINE__);
    return {};
}

std::vector<profile::KernelRecord> Profiler::candidateKernels(const Shape& s) const
{
    std::vector<profile::KernelRecord> kernels;
    for (const BoundLaunch& l : s.launches) {
        profile::KernelRecord k;
        auto lowered = m_request.loweredNames.find(l.kernel);
        k.name = lowered != m_request.loweredNames.end() ? lowered->second : l.kernel;
        k.demangled = demangle(k.name);
        for (size_t d = 0; d < 3; ++d) {
            k.grid[d] = l.grid[d];
            k.block[d] = l.block[d];
        }
        k.dynamicSharedBytes = l.sharedBytes;
        k.statics = staticsOf(l);
        kernels.push_back(std::move(k));
    }
    return kernels;
}

#ifdef KF_WITHOUT_CUPTI
Result<void> Profiler::readCounters(Shape&, profile::ProfileReport&)
{
    return Error::failed("profile with CUPTI", "this runner was built without CUPTI (KF_WITH_CUPTI=OFF)", "rebuild with -DKF_WITH_CUPTI=ON next to a CUDA toolkit that has CUPTI");
}
#else
Result<void> Profiler::readCounters(Shape& s, profile::ProfileReport& report)
{
    auto access = openCounters(m_gpu.device, m_gpu.info.ordinal, m_gpu.context.handle());
    if (!access)
        return access.error();
    report.counters.chip = access->chip;
    auto host = CounterHost::create(access->chip, access->availability);
    if (!host)
        return host.error();
    auto plan = host->plan();
    if (!plan)
        return plan.error();
    report.counters.passes = static_cast<int>(plan->passes);
    report.counters.unsupported = plan->unsupported;
    const std::int64_t replayTimeout = m_perCallMs * static_cast<std::int64_t>(plan->passes + 2);

    // One range profiler per side, so each side's ranges are its own launches in order.
    auto replay = [&](const std::function<Result<void>()>& workload, size_t maxRanges, const std::string& what,
                      std::int64_t timeoutMs, size_t& dropped) -> Result<std::vector<ProfiledRange>> {
        auto rp = RangeProfiler::enable(m_gpu.context.handle(), plan.value(), maxRanges);
        if (!rp)
            return rp.error();
        Result<std::vector<ProfiledRange>> got = Error{};
        auto r = synced([&]() -> Result<void> {
            got = rp->run(workload, host.value(), plan.value(), dropped);
            return got ? Result<void>() : Result<void>(got.error());
        }, what, timeoutMs);
        if (!r)
            return r.error();
        return got;
    };

    size_t dropped = 0;
    m_channel.progress(m_request.id, 300, "profile: the candidate, " + std::to_string(plan->passes) + " passes");
    auto ranges = replay([&] { return launchCandidate(s); }, std::max<size_t>(1, s.launches.size()),
                         "profile: the candidate at", replayTimeout, dropped);
    if (!ranges)
        return ranges.error();
    if (ranges->size() != s.launches.size())
        return Error::failed("profile the candidate", "CUPTI returned " + std::to_string(ranges->size()) + " ranges for " +
                                                  std::to_string(s.launches.size()) + " launches", "profile again; if it persists, report it with the GPU and driver version");
    for (size_t i = 0; i < ranges->size(); ++i)
        report.candidate->kernels[i].metrics = std::move((*ranges)[i].metrics);

    if (s.reference) {
        m_channel.progress(m_request.id, 650, "profile: the baseline, " + std::to_string(plan->passes) + " passes");
        // LibTorch may launch several kernels (and library kernels take longer per pass).
        auto base = replay([&] { return s.reference->run(); }, kMaxBaselineRanges, "profile: the baseline at",
                           replayTimeout * 8, dropped);
        if (!base)
            return base.error();
        if (dropped > 0)
            return Error::failed("profile the baseline", "the baseline launched more than " + std::to_string(kMaxBaselineRanges) +
                                                     " kernels; " + std::to_string(dropped) + " were not profiled", "profile a smaller shape, or without the baseline");
        report.baseline.emplace();
        for (auto& range : base.value()) {
            profile::KernelRecord k;
            // Numbered when CUPTI's callbacks could not name it (another tool holds them).
            k.name = range.name.empty() ? "LibTorch kernel " + std::to_string(report.baseline->kernels.size() + 1) : range.name;
            k.demangled = demangle(k.name);
            k.metrics = std::move(range.metrics);
            report.baseline->kernels.push_back(std::move(k));
        }
    }
    report.counters.available = true;
    return {};
}
#endif

Result<nlohmann::json> Profiler::run()
{
    profile::ProfileReport report;
    auto header = [&]() {
        nlohmann::json h = m_header.make("profile", "", "");
        for (const char* k : {"schema_version", "kind", "verdict", "summary"})
            h.erase(k);
        return h;
    };
    Shape s;
    s.ref = &m_request.runShapes.front();
    const ShapeBinding& binding = s.ref->binding;
    m_where = "shape " + (binding.label.empty() ? binding.describe() : binding.label + " (" + binding.describe() + ")");
    for (const auto& [k, v] : binding.values)
        report.shape[k] = v;
    report.label = binding.label;
    report.set = s.ref->set;

    auto fail = [&](const Error& e) -> Result<nlohmann::json> {
        if (stickyError())
            return fatal(e, m_where);
        report.verdict = protocol::Verdict::Error;
        report.summary = e.message();
        report.header = header();
        report.header["error"] = {{"what", e.what}, {"why", e.why}, {"hint", e.hint}};
        return report.toJson();
    };
    m_channel.progress(m_request.id, 50, "profile: preparing " + m_where);
    if (auto r = prepare(s); !r)
        return fail(r.error());
    m_perCallMs = m_request.launchTimeoutMs * static_cast<std::int64_t>(1 + s.launches.size());

    // Warm-up: module loading, LibTorch's handles and allocator pools stay out of the counters.
    if (auto r = synced([&] { return launchCandidate(s); }, "profile warm-up: the candidate at", m_perCallMs); !r)
        return fail(r.error());
    if (s.reference)
        if (auto r = synced([&] { return s.reference->run(); }, "profile warm-up: the baseline at", m_perCallMs); !r)
            return fail(r.error());

    report.candidate.emplace();
    report.candidate->kernels = candidateKernels(s);

    // Counters: any reason they cannot be read leaves a report with the static numbers.
    m_channel.progress(m_request.id, 200, "profile: opening the counters");
    if (auto counters = readCounters(s, report); !counters) {
        if (stickyError())
            return fatal(counters.error(), m_where);
        report.counters.available = false;
        report.counters.problem = counters.error().why;
        report.counters.howToEnable = counters.error().hint;
        report.baseline.reset();
        for (auto& k : report.candidate->kernels)
            k.metrics.clear();
    }
    report.candidate->totals = profile::totalsOf(report.candidate->kernels);
    if (report.baseline)
        report.baseline->totals = profile::totalsOf(report.baseline->kernels);
    report.ceilings = ceilings(report);
    report.verdict = report.counters.available ? protocol::Verdict::Ok : protocol::Verdict::NoCounters;
    report.summary = report.counters.available ? summarize(report)
                                               : "no hardware counters (" + report.counters.problem + "); static numbers only";
    m_channel.progress(m_request.id, 1000, "done");
    report.header = header();
    return report.toJson();
}

} // namespace kf::device
