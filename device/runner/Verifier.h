#pragma once
// Correctness of one candidate (docs/verification.md, correctness rules 1-10): per shape and trial,
// fresh guarded buffers, secret-seeded inputs with a pristine host copy, two runs with different
// sentinels, guard and input checks after the candidate, and only then the LibTorch reference
// from the pristine copy, compared in float64. Produces the correctness report of
// docs/report-schema.md.

#include "device/runner/BufferSet.h"
#include "device/runner/CandidateProgram.h"
#include "device/runner/CaseWriter.h"
#include "device/runner/Channel.h"
#include "device/runner/GpuContext.h"
#include "device/runner/ReportHeader.h"
#include "device/runner/RunPlan.h"
#include "engine/verify/Compare.h"

#include <nlohmann/json.hpp>

#include <cuda.h>

#include <optional>
#include <string>
#include <vector>

namespace kf::device {

class Verifier {
public:
    Verifier(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions);

    /// The report (verdict pass, fail, or error with what was done so far). An Error only when
    /// the CUDA context was lost (stickyError() is set; the caller sends it as fatal and exits).
    Result<nlohmann::json> run();

private:
    struct Trial;
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
    Error fatal(const Error& e, const std::string& where) const;
    std::string shapeName(const ShapeRef& shape) const;

    Channel& m_channel;
    const GpuContext& m_gpu;
    const RunPlan& m_request;
    ReportHeader m_header;
    CUstream m_stream = nullptr;
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
