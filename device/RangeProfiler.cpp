#include "device/RangeProfiler.h"

#include "device/Cupti.h"

#include <mutex>
#include <utility>

namespace kf::device {

namespace {

Result<void> initializeProfiler()
{
    // Once per process: CUPTI keeps the profiler initialised until exit.
    static std::once_flag once;
    static CUptiResult result = CUPTI_SUCCESS;
    std::call_once(once, [] {
        CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        result = KF_CUPTI(cuptiProfilerInitialize, &p);
    });
    if (result != CUPTI_SUCCESS)
        return cuptiError(result, "cuptiProfilerInitialize");
    return {};
}

std::string supportProblem(const CUpti_Profiler_DeviceSupported_Params& p)
{
    if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return "the GPU's architecture has no range profiler (compute capability 7.0 or newer is needed)";
    if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
        return "this virtual GPU has profiling disabled";
    if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return "this virtual GPU does not support profiling";
    if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return "confidential computing is on, which hides performance counters";
    if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return "crypto-mining processors have no performance counters";
    if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return "SLI is enabled";
    if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return "profiling is not supported under this WSL";
    return "CUPTI reports the device as unsupported";
}

} // namespace

Result<CounterAccess> openCounters(CUdevice device, int deviceIndex, CUcontext context)
{
    if (const auto& t = Cupti::get(); !t)
        return t.error();
    if (auto r = initializeProfiler(); !r)
        return r.error();
    CUpti_Profiler_DeviceSupported_Params support{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    support.cuDevice = device;
    support.api = CUPTI_PROFILER_RANGE_PROFILING;
    KF_CUPTI_CHECK(cuptiProfilerDeviceSupported, &support);
    if (support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return Error{"profile with CUPTI", supportProblem(support), "verification and timing still work on this GPU", {}, {}};

    CounterAccess access;
    CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = static_cast<size_t>(deviceIndex);
    KF_CUPTI_CHECK(cuptiDeviceGetChipName, &chip);
    access.chip = chip.pChipName ? chip.pChipName : "";

    // The availability image also answers the permission question: without it, this fails with
    // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.
    CUpti_Profiler_GetCounterAvailability_Params avail{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    avail.ctx = context;
    KF_CUPTI_CHECK(cuptiProfilerGetCounterAvailability, &avail);
    access.availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = access.availability.data();
    KF_CUPTI_CHECK(cuptiProfilerGetCounterAvailability, &avail);
    return access;
}

Result<RangeProfiler> RangeProfiler::enable(CUcontext context, const CounterPlan& plan, size_t maxRanges)
{
    if (auto r = initializeProfiler(); !r)
        return r.error();
    RangeProfiler rp;
    CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    en.ctx = context;
    KF_CUPTI_CHECK(cuptiRangeProfilerEnable, &en);
    rp.m_object = en.pRangeProfilerObject;

    auto names = plan.cuptiNames();
    CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = rp.m_object;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = maxRanges;
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(maxRanges);
    KF_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize, &size);
    rp.m_counterData.assign(size.counterDataSize, 0);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = rp.m_object;
    init.counterDataSize = rp.m_counterData.size();
    init.pCounterData = rp.m_counterData.data();
    KF_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize, &init);

    rp.m_config = plan.configImage; // CUPTI reads it at every pass; keep our own copy alive
    CUpti_RangeProfiler_SetConfig_Params cfg{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    cfg.pRangeProfilerObject = rp.m_object;
    cfg.configSize = rp.m_config.size();
    cfg.pConfig = rp.m_config.data();
    cfg.counterDataImageSize = rp.m_counterData.size();
    cfg.pCounterDataImage = rp.m_counterData.data();
    cfg.range = CUPTI_AutoRange;
    cfg.replayMode = CUPTI_KernelReplay;
    cfg.maxRangesPerPass = maxRanges;
    cfg.numNestingLevels = 1;
    cfg.minNestingLevel = 1;
    cfg.passIndex = 0;
    cfg.targetNestingLevel = 1;
    KF_CUPTI_CHECK(cuptiRangeProfilerSetConfig, &cfg);
    return rp;
}

RangeProfiler::RangeProfiler(RangeProfiler&& other) noexcept
    : m_object(std::exchange(other.m_object, nullptr)), m_counterData(std::move(other.m_counterData)),
      m_config(std::move(other.m_config))
{
}

RangeProfiler::~RangeProfiler()
{
    if (!m_object)
        return;
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = m_object;
    (void)KF_CUPTI(cuptiRangeProfilerDisable, &p);
}

Result<std::vector<ProfiledRange>> RangeProfiler::run(const std::function<Result<void>()>& workload, const CounterHost& host,
                                                      const CounterPlan& plan, size_t& dropped)
{
    // Kernel replay submits every pass within one start/stop; the loop is for configurations
    // CUPTI splits further, bounded so a profiler that never finishes cannot spin forever.
    bool allSubmitted = false;
    for (size_t round = 0; !allSubmitted && round <= plan.passes + 1; ++round) {
        CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        start.pRangeProfilerObject = m_object;
        KF_CUPTI_CHECK(cuptiRangeProfilerStart, &start);
        Result<void> w = workload();
        CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        stop.pRangeProfilerObject = m_object;
        const CUptiResult stopped = KF_CUPTI(cuptiRangeProfilerStop, &stop);
        if (!w)
            return w.error();
        if (stopped != CUPTI_SUCCESS)
            return cuptiError(stopped, "cuptiRangeProfilerStop");
        allSubmitted = stop.isAllPassSubmitted != 0;
    }
    if (!allSubmitted)
        return Error{"profile with CUPTI", "the range profiler still wanted passes after " + std::to_string(plan.passes + 2) + " rounds",
                     "report this as a KernelForge bug with the GPU and driver version", {}, {}};

    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = m_object;
    KF_CUPTI_CHECK(cuptiRangeProfilerDecodeData, &decode);
    dropped = decode.numOfRangeDropped;

    CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = m_counterData.data();
    info.counterDataImageSize = m_counterData.size();
    KF_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo, &info);
    std::vector<ProfiledRange> ranges;
    for (size_t i = 0; i < info.numTotalRanges; ++i) {
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params r{CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
        r.pCounterDataImage = m_counterData.data();
        r.counterDataImageSize = m_counterData.size();
        r.rangeIndex = i;
        r.rangeDelimiter = "/";
        KF_CUPTI_CHECK(cuptiRangeProfilerCounterDataGetRangeInfo, &r);
        ProfiledRange range;
        range.name = r.rangeName ? r.rangeName : "";
        auto values = host.evaluate(plan, m_counterData, i);
        if (!values)
            return values.error();
        range.metrics = std::move(values.value());
        ranges.push_back(std::move(range));
    }
    return ranges;
}

} // namespace kf::device
