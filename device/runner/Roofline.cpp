#include "device/runner/Roofline.h"

#include "engine/core/Architectures.h"

#include <algorithm>

namespace kf::device {

namespace {

double evalCost(const Expr& e, const Env& env)
{
    if (e.empty())
        return 0.0;
    auto v = e.eval(env);
    return v ? std::max(0.0, v->asDouble()) : 0.0;
}

} // namespace

Roofline Roofline::at(const Task& task, const ShapeBinding& shape, const std::vector<DType>& inputTypes,
                      const DeviceInfo& device, const std::string& requestArch)
{
    Roofline r;
    const Env env = task.environment(shape);
    r.bytes = evalCost(task.bytesFormula, env);
    r.flops = evalCost(task.flopsFormula, env);
    r.peakGBs = device.peakBandwidthGBs;

    bool int8 = false, half = false;
    for (DType t : inputTypes) {
        int8 = int8 || t == DType::I8 || t == DType::U8;
        half = half || t == DType::F16 || t == DType::BF16;
    }
    const ArchInfo* arch = findArchitecture(device.arch());
    if (!arch && !requestArch.empty())
        arch = findArchitecture(requestArch);
    if (arch) {
        const double smScale = arch->smCount > 0 ? std::max(1.0, static_cast<double>(device.smCount) / arch->smCount) : 1.0;
        // 8-bit integer inputs may run on int8 tensor cores, at twice the fp16 rate.
        r.floorTflops = std::max(arch->peakFp32Tflops, arch->peakFp16TensorTflops) * smScale * (int8 ? 2.0 : 1.0);
        r.typicalTflops =
            (int8 ? 2.0 * arch->peakFp16TensorTflops : half ? arch->peakFp16TensorTflops : arch->peakFp32Tflops) * smScale;
    }
    if (r.peakGBs > 0)
        r.floorMs = std::max(r.floorMs, r.bytes / (r.peakGBs * 1e9) * 1e3);
    if (r.floorTflops > 0)
        r.floorMs = std::max(r.floorMs, r.flops / (r.floorTflops * 1e12) * 1e3);
    return r;
}

double Roofline::achievedGBs(double medianMs) const
{
    return medianMs > 0 ? bytes / (medianMs * 1e-3) / 1e9 : 0.0;
}

double Roofline::achievedTflops(double medianMs) const
{
    return medianMs > 0 ? flops / (medianMs * 1e-3) / 1e12 : 0.0;
}

} // namespace kf::device
