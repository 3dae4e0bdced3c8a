#pragma once
// Correctness of one candidate (docs/verification.md, correctness rules 1-10): per shape and trial,
// fresh guarded buffers, secret-seeded inputs with a pristine host copy, two runs with different
// sentinels, guard and input checks after the candidate, and only then the LibTorch reference
// from the pristine copy, compared in float64. Produces the correctness report of
// docs/report-schema.md.

#include "device/runner/BufferSet.h"
#include "device/runner/CandidateProgram.h"
#include "device/runner/CaseWriter.h"
#include "device/runner/RunMode.h"
#include "engine/verify/Compare.h"

#include <nlohmann/json.hpp>

#include <cuda.h>

#include <optional>
#include <string>
#include <vector>

namespace kf::device {

class Verifier : RunMode {
public:
    Verifier(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions);

    /// The report (verdict pass, fail, or error with what was done so far). An Error only when
    /// the CUDA context was lost (stickyError() is set; the caller sends it as fatal and exits).
    Result<nlohmann::json> run();

private:
    struct Trial;
    /// The report's header again (duration_ms covers the whole run), phase times, verdict and summary.
    void conclude(nlohmann::json& report, const std::optional<Error>& runError, int failedShapes,
                  const std::string& firstFailure, bool discriminates);
    Result<nlohmann::json> runShape(size_t shapeIndex, int& unitsDone, bool& discriminates);
    /// `position` indexes the request's seeds; the trial's number is firstTrial + position.
    Result<nlohmann::json> runTrial(size_t shapeIndex, const std::vector<TensorLayout>& layout, int position,
                                    nlohmann::json& negativeControls, bool& saved);
    /// The inputs of one trial: from the seed, or from the request's inputs_dir (a repro).
    Result<void> fillInputs(const std::vector<const TensorLayout*>& inputs, const BufferSet& buffers, int trial,
                            std::uint64_t seed, nlohmann::json& distributions,
                            std::vector<std::vector<unsigned char>>& pristine);
    /// Runs the candidate once on `buffers`; fills `t` with launch errors, guard violations,
    /// modified inputs and the outputs. An Error only for a lost context.
    Result<void> runCandidate(const ShapeRef& shape, const std::vector<TensorLayout>& layout, const BufferSet& buffers,
                              const std::vector<std::vector<unsigned char>>& pristine, int trial, int run, Trial& t);
    /// runCandidate's three steps: fresh state for the run (pristine inputs, canaries, sentinel
    /// outputs, zeroed scratch); one launch with its watchdog and canary check (a failed launch
    /// is recorded in t.launchError); run 0's outputs to the host and the inputs checked.
    Result<void> prepareRun(const std::vector<TensorLayout>& layout, const BufferSet& buffers,
                            const std::vector<std::vector<unsigned char>>& pristine, int trial, int run, Trial& t,
                            const std::string& where);
    Result<void> launchOnce(const BoundLaunch& l, const ShapeRef& shape, const BufferSet& buffers, int trial, int run,
                            Trial& t, const std::string& where);
    Result<void> collectRun(const std::vector<TensorLayout>& layout, const BufferSet& buffers,
                            const std::vector<std::vector<unsigned char>>& pristine, int run, Trial& t,
                            const std::string& where);
    struct Expectation;
    struct Comparison;
    /// The secret fingerprints of a trial's pristine inputs (small ones are compared on the host).
    Result<void> fingerprintInputs(const std::vector<const TensorLayout*>& inputs, const BufferSet& buffers, Trial& t,
                                   const std::string& where) const;
    /// The references, from a copy of the pristine inputs the candidate never had: LibTorch's own
    /// (the baseline) and the float64 golden result errors are measured against (rule 7).
    Result<void> prepareExpected(const std::vector<const TensorLayout*>& inputs,
                                 const std::vector<std::vector<unsigned char>>& pristine, Expectation& into,
                                 const std::string& where) const;
    /// Run 0's outputs judged against the references and against run 1 (rules 2, 7, 8, 9, 10).
    Result<void> compareOutputs(const std::vector<const TensorLayout*>& outputs, const BufferSet& buffers, Trial& t,
                                const Expectation& expected, bool firstTrialOfShape, nlohmann::json& negativeControls,
                                Comparison& into, const std::string& where) const;
    /// Writes a failing trial's tensors (inputs, expected results, run outputs) as a case;
    /// returns what CaseWriter::save says about it.
    Result<nlohmann::json> saveCase(size_t shapeIndex, int trial, std::uint64_t seed, const nlohmann::json& result,
                                    const std::vector<const TensorLayout*>& inputs,
                                    const std::vector<const TensorLayout*>& outputs,
                                    const std::vector<std::vector<unsigned char>>& pristine, const BufferSet& buffers,
                                    const Trial& t, const Expectation& expected, const Comparison& compared,
                                    const std::string& where);
    /// The trial's failure sentence, empty when it passed: the first of the launch, the guards,
    /// the inputs, then the outputs.
    static std::string trialFailure(const Trial& t, const Comparison& compared);
    /// One trial's entry of the report's "trials".
    static nlohmann::json trialReport(int trial, std::uint64_t seed, const nlohmann::json& distributions,
                                      const std::string& failure, const Trial& t, const Comparison& compared);
    /// An error met during a trial: fatal when the context was lost, as it is otherwise.
    Error trialError(const Error& e, const std::string& where) const;
    std::string shapeName(const ShapeRef& shape) const;

    const CandidateProgram* m_program = nullptr;
    std::optional<CaseWriter> m_cases;
    int m_totalUnits = 1;
    int m_permille = 0;
    /// Where a verification's time goes, summed over trials (the report's phase_ms).
    struct Phases {
        double inputs = 0, candidate = 0, reference = 0, compare = 0;
    } m_phases;
};

} // namespace kf::device
