#pragma once
// The runner's LibTorch side, behind a header free of ATen so only TorchBridge*.cpp pay for
// LibTorch's headers (they are slow to compile). Everything works on device memory the caller
// owns (raw pointers), on the current CUDA stream of LibTorch, which the runner also launches on.
// In CPU mode (no GPU) the same calls take host pointers: input generation, reference and
// comparison are testable in CI.

#include "engine/core/Result.h"
#include "engine/task/Task.h"
#include "engine/verify/Compare.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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

    /// A 64-bit fingerprint of `t`'s bytes under a secret `key`, computed where the data is: a
    /// changed byte changes it, and without the key a kernel cannot change bytes and keep it.
    static Result<std::uint64_t> fingerprint(const RawTensor& t, std::uint64_t key);

    /// Fills `dst` with values of `dist` (docs/verification.md rule 6), deterministic in `seed`.
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
    /// Native: LibTorch as a user would call it, in the task's dtypes (the baseline).
    /// Golden: the same computation in float64 (floating inputs upcast, floating casts of the
    /// tape made float64, a TorchScript module converted with .to(double)), the truth a
    /// candidate's error is measured against (docs/verification.md, correctness rule 7).
    /// Integer outputs of a golden reference are computed as natively.
    enum class Precision { Native, Golden };
    static Result<std::unique_ptr<Reference>> prepareReference(const Task& task,
                                                               const std::map<std::string, RawTensor>& inputs,
                                                               Precision precision = Precision::Native);

    /// The float64 golden reference of `task` on `inputs`, already run: what Expected::golden
    /// points at. Null when no output is floating or the float64 evaluation fails; `note` then
    /// says why (a report shows it, and LibTorch's result is the expected one).
    static std::unique_ptr<Reference> runGolden(const Task& task, const std::map<std::string, RawTensor>& inputs,
                                                std::string& note);

    // Comparison where the data is: on the GPU in CUDA mode (LibTorch kernels in float64), on
    // the host in CPU mode. Only statistics, the bounded samples and their indices come back.
    // Every verdict is the one classify() (engine/verify/Compare.h) gives element by element.

    /// What an output is judged against: LibTorch's last result of `libtorch`, and the golden
    /// result of `golden` when it is given and the output is floating (else `goldenNote` says why
    /// there is none, and LibTorch's result is the expected one).
    struct Expected {
        Reference* libtorch = nullptr;
        Reference* golden = nullptr;
        std::string goldenNote;
    };
    /// Where a comparison runs. Auto: on the host below kHostCompareElements elements, where a
    /// GPU's per-kernel overhead costs more than the arithmetic, else on the compute device.
    /// Both give the same verdicts (tst_torchbridge compares them element by element).
    enum class CompareAt { Auto, Host, Device };
    static constexpr std::int64_t kHostCompareElements = 1 << 16;

    /// Judges `actual` (host or device memory, the output's dtype) as compareOutput() does.
    static Result<OutputCheck> judgeOutput(const Expected& expected, const TensorSpec& output, const RawTensor& actual,
                                           const void* sentinel, int maxSamples, CompareAt at = CompareAt::Auto);
    /// Rule 8 over the expected result (negativeControl()).
    static Result<NegativeControl> negativeControl(const Expected& expected, const TensorSpec& output,
                                                   CompareAt at = CompareAt::Auto);
    /// One trial's judgement of one output, with the expected results prepared once: run 0
    /// judged (judgeOutput()), the two runs compared (rule 9, countDisagreements()) and, when
    /// asked, the negative control.
    struct TrialJudgement {
        OutputCheck check;
        std::int64_t runDisagreements = 0;
        double runMaxAbsDiff = 0;
        std::optional<NegativeControl> negativeControl;
    };
    static Result<TrialJudgement> judgeTrial(const Expected& expected, const TensorSpec& output, const RawTensor& run0,
                                             const RawTensor& run1, const void* sentinel, int maxSamples,
                                             bool withNegativeControl, CompareAt at = CompareAt::Auto);

    /// The expected result of `output` as float64 on the host (a failing case's saved tensors).
    static Result<std::vector<double>> expectedAsDouble(const Expected& expected, const std::string& output, bool golden);
};

} // namespace kf::device
