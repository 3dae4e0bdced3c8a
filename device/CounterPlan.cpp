#include "device/CounterPlan.h"

#include "device/Cupti.h"

#include <cmath>
#include <utility>

namespace kf::device {

std::vector<const char*> CounterPlan::cuptiNames() const
{
    std::vector<const char*> names;
    for (const auto* m : metrics)
        names.push_back(m->cuptiName);
    return names;
}

Result<std::vector<std::string>> CounterHost::supportedChips()
{
    if (const auto& t = Cupti::get(); !t)
        return t.error();
    CUpti_Profiler_Host_GetSupportedChips_Params p{CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
    KF_CUPTI_CHECK(cuptiProfilerHostGetSupportedChips, &p);
    std::vector<std::string> chips;
    for (size_t i = 0; i < p.numChips; ++i)
        chips.emplace_back(p.ppChipNames[i]);
    return chips;
}

Result<CounterHost> CounterHost::create(const std::string& chip, const std::vector<std::uint8_t>& counterAvailability)
{
    if (const auto& t = Cupti::get(); !t)
        return t.error();
    auto chips = supportedChips();
    if (!chips)
        return chips.error();
    bool known = false;
    std::string list;
    for (const auto& c : chips.value()) {
        known = known || c == chip;
        list += (list.empty() ? "" : ", ") + c;
    }
    if (!known)
        return Error::failed("plan hardware counters", "CUPTI does not know the chip \"" + chip + "\"", "chips this CUPTI knows: " + list + "; a newer CUDA toolkit may know more");
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = counterAvailability.empty() ? nullptr : counterAvailability.data();
    KF_CUPTI_CHECK(cuptiProfilerHostInitialize, &p);
    CounterHost h;
    h.m_chip = chip;
    h.m_host = p.pHostObject;
    return h;
}

CounterHost::CounterHost(CounterHost&& other) noexcept
    : m_chip(std::move(other.m_chip)), m_host(std::exchange(other.m_host, nullptr))
{
}

CounterHost& CounterHost::operator=(CounterHost&& other) noexcept
{
    if (this != &other) {
        this->~CounterHost();
        m_chip = std::move(other.m_chip);
        m_host = std::exchange(other.m_host, nullptr);
    }
    return *this;
}

CounterHost::~CounterHost()
{
    if (!m_host)
        return;
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = m_host;
    (void)KF_CUPTI(cuptiProfilerHostDeinitialize, &p);
    m_host = nullptr;
}

bool CounterHost::supports(const char* cuptiName) const
{
    CUpti_Profiler_Host_GetMetricProperties_Params p{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    p.pHostObject = m_host;
    p.pMetricName = cuptiName;
    return KF_CUPTI(cuptiProfilerHostGetMetricProperties, &p) == CUPTI_SUCCESS;
}

Result<CounterPlan> CounterHost::plan()
{
    CounterPlan plan;
    plan.chip = m_chip;
    std::string missingRequired;
    for (const auto& m : profile::metricCatalog()) {
        if (supports(m.cuptiName))
            plan.metrics.push_back(&m);
        else if (m.required)
            missingRequired += std::string(missingRequired.empty() ? "" : ", ") + m.cuptiName;
        else
            plan.unsupported.emplace_back(m.key);
    }
    if (!missingRequired.empty())
        return Error::failed("plan hardware counters", "the chip " + m_chip + " lacks the metrics " + missingRequired, "profiling needs a Volta or newer GPU with CUPTI's range profiler");
    auto names = plan.cuptiNames();
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = m_host;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    KF_CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics, &add);
    CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = m_host;
    KF_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize, &size);
    plan.configImage.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = m_host;
    image.configImageSize = plan.configImage.size();
    image.pConfigImage = plan.configImage.data();
    KF_CUPTI_CHECK(cuptiProfilerHostGetConfigImage, &image);
    CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    passes.configImageSize = plan.configImage.size();
    passes.pConfigImage = plan.configImage.data();
    KF_CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses, &passes);
    plan.passes = passes.numOfPasses;
    return plan;
}

Result<std::map<std::string, double>> CounterHost::evaluate(const CounterPlan& plan, const std::vector<std::uint8_t>& counterData,
                                                            size_t rangeIndex) const
{
    auto names = plan.cuptiNames();
    std::vector<double> values(names.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params p{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    p.pHostObject = m_host;
    p.pCounterDataImage = counterData.data();
    p.counterDataImageSize = counterData.size();
    p.rangeIndex = rangeIndex;
    p.ppMetricNames = names.data();
    p.numMetrics = names.size();
    p.pMetricValues = values.data();
    KF_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues, &p);
    std::map<std::string, double> out;
    for (size_t i = 0; i < names.size(); ++i)
        if (std::isfinite(values[i]))
            out[plan.metrics[i]->key] = values[i];
    return out;
}

} // namespace kf::device
