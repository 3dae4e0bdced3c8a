#pragma once
// The runner's LibTorch side, behind a header free of ATen so only TorchBridge*.cpp pay for
// LibTorch's headers (they are slow to compile). Everything works on device memory the caller
// owns (raw pointers), on the current CUDA stream of LibTorch, which the runner also launches on.
// In CPU mode (no GPU) the same calls take host pointers: input generation, reference and
// comparison are testable in CI.

#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kf::device {

/// A contiguous tensor in memory the caller owns.
struct RawTensor {
    void* data = nullptr;
    DType dtype = DType::F32;
    std::vector<std::int64_t> extents;
    bool onDevice = true;
    std::int64_t elements() const;
    std::int64_t bytes() const;
};

class TorchBridge {
public:
    /// Initialises LibTorch once. `useCuda` false forces CPU mode.
    static Result<void> init(bool useCuda);
    static bool cudaAvailable();
    static std::string torchVersion();
    /// The raw CUstream LibTorch is using (the runner launches candidates on the same one).
    static void* currentStream();
    static void synchronize();

    /// Fills `dst` with values of `dist` (VERIFICATION.md rule 6), deterministic in `seed`.
    static Result<void> fillInput(const RawTensor& dst, const Distribution& dist, std::uint64_t seed);

    /// Evaluates the task's reference (catalog op, op tape or TorchScript) on `inputs` (task input
    /// name -> tensor). Results stay owned by the returned object so a bench can time run() alone.
    class Reference {
    public:
        virtual ~Reference() = default;
        /// Runs the reference once (asynchronously on the current stream); results replace the last ones.
        virtual Result<void> run() = 0;
        /// Copies the last results into `outputs` (task output name -> destination tensor).
        virtual Result<void> copyResultsTo(const std::map<std::string, RawTensor>& outputs) = 0;
        /// The last results converted to float64 on the host, row-major (for comparison).
        virtual Result<std::vector<double>> resultAsDouble(const std::string& output) = 0;
    };
    static Result<std::unique_ptr<Reference>> prepareReference(const Task& task,
                                                               const std::map<std::string, RawTensor>& inputs);
};

} // namespace kf::device
