#include "device/RangeProfiler.h"

#include "device/Cupti.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <mutex>
#include <optional>
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

// Auto ranges are named by number, so the launches' kernel names are taken from CUPTI's
// callbacks while the profiled call runs: driver launches, else (should the runtime not go
// through them) runtime launches. Without a subscriber slot (another tool holds it) the names
// stay empty and the report numbers the kernels.
class LaunchNames {
public:
    LaunchNames()
    {
        if (cupti().cuptiSubscribe(&m_subscriber, &LaunchNames::onCallback, this) != CUPTI_SUCCESS) {
            m_subscriber = nullptr;
            return;
        }
        for (CUpti_CallbackId id : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                                    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz})
            (void)cupti().cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
        for (CUpti_CallbackId id : {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000})
            (void)cupti().cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
    }
    ~LaunchNames() { stop(); }
    /// No more names: later rounds replay the same launches.
    void stop()
    {
        if (m_subscriber)
            (void)cupti().cuptiUnsubscribe(std::exchange(m_subscriber, nullptr));
    }
    LaunchNames(const LaunchNames&) = delete;
    LaunchNames& operator=(const LaunchNames&) = delete;

    /// The names in launch order when they account for exactly `ranges` launches, else empty.
    std::vector<std::string> names(size_t ranges) const
    {
        std::lock_guard lock(m_mutex);
        if (m_driver.size() == ranges)
            return m_driver;
        if (m_runtime.size() == ranges)
            return m_runtime;
        return {};
    }

private:
    static void CUPTIAPI onCallback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data)
    {
        const auto* info = static_cast<const CUpti_CallbackData*>(data);
        if (!info || info->callbackSite != CUPTI_API_ENTER || !info->symbolName)
            return;
        auto* me = static_cast<LaunchNames*>(self);
        std::lock_guard lock(me->m_mutex);
        (domain == CUPTI_CB_DOMAIN_DRIVER_API ? me->m_driver : me->m_runtime).emplace_back(info->symbolName);
    }

    CUpti_SubscriberHandle m_subscriber = nullptr;
    mutable std::mutex m_mutex;
    std::vector<std::string> m_driver, m_runtime;
};

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
        return Error::failed("profile with CUPTI", supportProblem(support), "verification and timing still work on this GPU");

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
    std::optional<LaunchNames> names;
    for (size_t round = 0; !allSubmitted && round <= plan.passes + 1; ++round) {
        CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        start.pRangeProfilerObject = m_object;
        KF_CUPTI_CHECK(cuptiRangeProfilerStart, &start);
        if (round == 0)
            names.emplace(); // the first round's launches are the ones the ranges number
        Result<void> w = workload();
        if (round == 0)
            names->stop();
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
        return Error::failed("profile with CUPTI", "the range profiler still wanted passes after " + std::to_string(plan.passes + 2) + " rounds", "report this as a KernelForge bug with the GPU and driver version");

    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = m_object;
    KF_CUPTI_CHECK(cuptiRangeProfilerDecodeData, &decode);
    dropped = decode.numOfRangeDropped;

    CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = m_counterData.data();
    info.counterDataImageSize = m_counterData.size();
    KF_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo, &info);
    const std::vector<std::string> launchNames = names ? names->names(info.numTotalRanges) : std::vector<std::string>{};
    std::vector<ProfiledRange> ranges;
    for (size_t i = 0; i < info.numTotalRanges; ++i) {
        ProfiledRange range;
        range.name = i < launchNames.size() ? launchNames[i] : "";
        auto values = host.evaluate(plan, m_counterData, i);
        if (!values)
            return values.error();
        range.metrics = std::move(values.value());
        ranges.push_back(std::move(range));
    }
    return ranges;
}

} // namespace kf::device
