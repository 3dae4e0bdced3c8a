#pragma once
// The sanity floor of a timing (docs/verification.md timing rule 6): no kernel moves the task's bytes
// faster than the DRAM peak, nor does its flops faster than the fastest math unit. A median
// below the floor is an error in the measurement (or a cheat), not a record.

#include "device/DeviceInfo.h"
#include "engine/task/Task.h"

#include <string>
#include <vector>

namespace kf::device {

struct Roofline {
    double bytes = 0;              ///< the task's cost formula at this shape (0: none given)
    double flops = 0;
    double peakGBs = 0;            ///< DRAM, from the device's memory clock and bus width
    double floorTflops = 0;        ///< the largest math peak (a true floor); 0 when unknown
    double typicalTflops = 0;      ///< the peak for the inputs' type, for pct_peak_flops
    double floorMs = 0;            ///< max(bytes / peak bandwidth, flops / floor peak)

    /// `inputTypes` pick the math peak (fp16/bf16: tensor cores; int8: twice that). Peaks come
    /// from the architecture table for `device` (else `requestArch`), scaled up when the device
    /// has more SMs than the table's example GPU, so the floor never rises above the truth.
    static Roofline at(const Task& task, const ShapeBinding& shape, const std::vector<DType>& inputTypes,
                       const DeviceInfo& device, const std::string& requestArch);

    bool below(double medianMs) const { return floorMs > 0 && medianMs < floorMs; }
    double achievedGBs(double medianMs) const;
    double achievedTflops(double medianMs) const;
};

} // namespace kf::device
