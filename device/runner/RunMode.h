#pragma once
// What the runner's three modes of a candidate share (Verifier, Bencher, Profiler): the request,
// the GPU, the channel their progress goes out on, the report's header, and LibTorch's stream,
// which their launches and the LibTorch side both use.

#include "device/runner/BufferSet.h"
#include "device/runner/Channel.h"
#include "device/runner/GpuContext.h"
#include "device/runner/ReportHeader.h"
#include "device/runner/RunPlan.h"

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kf::device {

class RunMode {
protected:
    /// `action` names the mode in the error of a lost context ("run", "benchmark", "profile").
    RunMode(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions,
            std::string action);

    /// The GPU's context made current on this thread and LibTorch's current stream in m_stream.
    Result<void> enterContext();
    /// The layout of `shape` and its outputs and scratch (canaries seeded by `seed`), shared by all
    /// of a shape's input sets. The benchmark and the profiler set a shape up this way, so a
    /// profiled kernel runs on the memory a timed one does.
    Result<void> layOutShape(const ShapeBinding& shape, std::uint64_t seed, std::vector<TensorLayout>& layout,
                             BufferSet& outputs) const;
    /// `e` as the error that ends the run when the CUDA context was lost, naming `where`.
    Error fatal(const Error& e, const std::string& where) const;

    Channel& m_channel;
    const GpuContext& m_gpu;
    const RunPlan& m_request;
    ReportHeader m_header;
    CUstream m_stream = nullptr;

private:
    std::string m_action;
};

} // namespace kf::device
