#include "engine/protocol/MetricCatalog.h"

#include <array>

namespace kf::profile {

namespace {

using namespace key;

// Sources: the CUPTI metric names Nsight Compute's "GPU Speed Of Light", "Occupancy" and
// "Roofline" sections use. Flop counts are thread instructions with all predicates true; an
// FMA counts as two flops when the totals are made (ProfileReport.cpp).
constexpr std::array kCatalog{
    MetricInfo{kAchievedOccupancy, "sm__warps_active.avg.pct_of_peak_sustained_active", "%",
               "achieved occupancy: warps resident per active cycle, as % of the SM's maximum", true},
    MetricInfo{kSmThroughput, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%",
               "SM throughput: the busiest SM pipeline or unit, as % of its peak", true},
    MetricInfo{kDramThroughput, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%",
               "DRAM throughput as % of peak", true},
    MetricInfo{kMemoryThroughput, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%",
               "memory throughput: the busiest of L1, L2 and DRAM, as % of its peak", false},
    MetricInfo{kDramReadBytes, "dram__bytes_read.sum", "bytes", "bytes read from DRAM", true},
    MetricInfo{kDramWriteBytes, "dram__bytes_write.sum", "bytes", "bytes written to DRAM", true},
    MetricInfo{kDuration, "gpu__time_duration.sum", "ns", "kernel duration on the GPU", true},
    MetricInfo{kL1HitRate, "l1tex__t_sector_hit_rate.pct", "%", "L1/texture cache sector hit rate", false},
    MetricInfo{kL2HitRate, "lts__t_sector_hit_rate.pct", "%", "L2 sector hit rate", false},
    MetricInfo{kFfma, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "instructions", "fp32 FMA thread instructions", false},
    MetricInfo{kFadd, "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "instructions", "fp32 add thread instructions", false},
    MetricInfo{kFmul, "sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "instructions", "fp32 multiply thread instructions", false},
    MetricInfo{kDfma, "sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "instructions", "fp64 FMA thread instructions", false},
    MetricInfo{kDadd, "sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "instructions", "fp64 add thread instructions", false},
    MetricInfo{kDmul, "sm__sass_thread_inst_executed_op_dmul_pred_on.sum", "instructions", "fp64 multiply thread instructions", false},
    MetricInfo{kHfma, "sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "instructions", "fp16 FMA thread instructions", false},
    MetricInfo{kHadd, "sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "instructions", "fp16 add thread instructions", false},
    MetricInfo{kHmul, "sm__sass_thread_inst_executed_op_hmul_pred_on.sum", "instructions", "fp16 multiply thread instructions", false},
    MetricInfo{kTensorInstructions, "sm__inst_executed_pipe_tensor.sum", "instructions", "warp instructions on the tensor pipe", false},
    MetricInfo{kSmClock, "sm__cycles_elapsed.avg.per_second", "Hz", "SM clock while the kernel ran", false},
    MetricInfo{kDramPeakBytesPerCycle, "dram__bytes.sum.peak_sustained", "bytes/cycle", "DRAM peak bytes per DRAM cycle", false},
    MetricInfo{kDramClock, "dram__cycles_elapsed.avg.per_second", "Hz", "DRAM clock while the kernel ran", false},
};

} // namespace

std::span<const MetricInfo> metricCatalog()
{
    return kCatalog;
}

const MetricInfo* findMetric(std::string_view keyOrCuptiName)
{
    for (const MetricInfo& m : kCatalog)
        if (keyOrCuptiName == m.key || keyOrCuptiName == m.cuptiName)
            return &m;
    return nullptr;
}

} // namespace kf::profile
