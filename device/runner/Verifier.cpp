#include "device/runner/Verifier.h"
#include "engine/protocol/Verdict.h"

#include "device/CudaDriver.h"
#include "device/DeviceMemory.h"
#include "device/runner/TorchBridge.h"
#include "device/runner/VerifierTrial.h"
#include "engine/core/Clock.h"
#include "engine/protocol/VerifyReport.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

namespace kf::device {

using namespace verifier;

namespace {

std::string guardSentence(const GuardViolation& v, const std::string& when)
{
    std::string s = "guard violation: " + v.buffer + " was written ";
    if (v.after)
        s += "past its end (the first changed canary byte is " + std::to_string(v.offsetBytes) + " bytes after the end";
    else
        s += "before its start (the nearest changed canary byte is " + std::to_string(v.offsetBytes + 1) +
             " bytes before the start";
    return s + ", " + std::to_string(v.changedBytes) + " canary bytes changed, seen " + when + ")";
}

} // namespace

Verifier::Verifier(Channel& channel, const GpuContext& gpu, const RunPlan& request, SoftwareVersions versions)
    : RunMode(channel, gpu, request, std::move(versions), "run")
{
}

std::string Verifier::shapeName(const ShapeRef& shape) const
{
    const std::string d = shape.binding.describe();
    return shape.binding.label.empty() ? d : shape.binding.label + " (" + d + ")";
}

Result<nlohmann::json> Verifier::run()
{
    nlohmann::json report = m_header.make("correctness", "error", "");
    nlohmann::json seeds = nlohmann::json::array();
    for (int t = 0; t < m_request.trials; ++t)
        seeds.push_back(seedHex(m_request.seeds[static_cast<size_t>(t)]));
    report["seeds"] = seeds;
    report["trials_per_shape"] = m_request.trials;
    report["mode"] = m_request.mode;
    report["inputs"] = m_request.inputsDir.empty() ? "seeded" : "file";
    if (m_request.dump) {
        report["dump_dir"] = m_request.dump->dir;
        m_cases.emplace(*m_request.dump);
    }
    report["discriminates"] = true;
    report["shapes"] = nlohmann::json::array();

    if (auto r = enterContext(); !r) {
        ReportHeader::markError(report, r.error());
        return report;
    }
    auto program = CandidateProgram::load(m_request, m_gpu.info);
    if (!program)
        return ReportHeader::stoppedBy(std::move(report), program.error());
    m_program = &program.value();
    m_totalUnits = static_cast<int>(m_request.runShapes.size()) * m_request.trials;

    int unitsDone = 0;
    bool discriminates = true;
    std::string firstFailure;
    int failedShapes = 0;
    std::optional<Error> runError;
    for (size_t s = 0; s < m_request.runShapes.size(); ++s) {
        auto shape = runShape(s, unitsDone, discriminates);
        if (!shape) {
            if (stickyError())
                return shape.error();
            runError = shape.error();
            break;
        }
        if (!shape.value()["passed"].get<bool>()) {
            ++failedShapes;
            if (firstFailure.empty())
                for (const auto& t : shape.value()["trials"])
                    if (!t["passed"].get<bool>()) {
                        firstFailure = "shape " + shapeName(m_request.runShapes[s]) + " trial " + std::to_string(t["trial"].get<int>()) +
                                       ": " + t["failure"].get<std::string>();
                        break;
                    }
        }
        report["shapes"].push_back(std::move(shape.value()));
    }
    m_channel.progress(m_request.id, 1000, "done");

    conclude(report, runError, failedShapes, firstFailure, discriminates);
    return report;
}

void Verifier::conclude(nlohmann::json& report, const std::optional<Error>& runError, int failedShapes,
                        const std::string& firstFailure, bool discriminates)
{
    // The header again: duration_ms covers the whole run.
    nlohmann::json done = m_header.make("correctness", "pass", "");
    for (auto it = done.begin(); it != done.end(); ++it)
        report[it.key()] = it.value();
    report["discriminates"] = discriminates;
    auto tenth = [](double ms) { return std::round(ms * 10.0) / 10.0; };
    report["phase_ms"] = {{"inputs", tenth(m_phases.inputs)}, {"candidate", tenth(m_phases.candidate)},
                          {"reference", tenth(m_phases.reference)}, {"compare", tenth(m_phases.compare)}};
    const size_t shapes = report["shapes"].size();
    if (runError) {
        ReportHeader::markError(report, *runError);
    } else if (failedShapes > 0) {
        report["verdict"] = protocol::verdictName(protocol::Verdict::Fail);
        report["summary"] = std::to_string(failedShapes) + " of " + std::to_string(shapes) + " shapes failed; first: " + firstFailure;
    } else {
        report["verdict"] = protocol::verdictName(protocol::Verdict::Pass);
        std::string s = "all " + std::to_string(shapes) + " shapes passed " + std::to_string(m_request.trials) +
                        " trials each (two runs per trial)";
        s += discriminates ? "" : "; but the task cannot discriminate: an all-zero or constant output would also pass "
                                  "for some shape (see negative_control)";
        report["summary"] = s;
    }
}

Result<nlohmann::json> Verifier::runShape(size_t shapeIndex, int& unitsDone, bool& discriminates)
{
    const ShapeRef& shape = m_request.runShapes[shapeIndex];
    auto layout = layoutFor(m_request.task, m_request.candidate(), shape.binding, m_gpu.info.memoryBytes);
    if (!layout)
        return layout.error();
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [k, v] : shape.binding.values)
        values[k] = v;
    nlohmann::json out = {{"shape", values}, {"label", shape.binding.label}, {"set", shape.set}, {"passed", true},
                          {"negative_control", nlohmann::json::array()}, {"trials", nlohmann::json::array()}};
    nlohmann::json negative = nlohmann::json::array();
    bool passed = true;
    bool saved = false; // a case of this shape is on disk (first_failing saves one per shape)
    for (int t = 0; t < m_request.trials; ++t) {
        m_permille = unitsDone * 1000 / m_totalUnits;
        m_channel.progress(m_request.id, m_permille,
                           "shape " + std::to_string(shapeIndex + 1) + "/" + std::to_string(m_request.runShapes.size()) + " " +
                               shapeName(shape) + " trial " + std::to_string(t + 1) + "/" + std::to_string(m_request.trials));
        auto trial = runTrial(shapeIndex, layout.value(), t, negative, saved);
        if (!trial)
            return trial.error();
        passed = passed && trial.value()["passed"].get<bool>();
        out["trials"].push_back(std::move(trial.value()));
        ++unitsDone;
    }
    for (const auto& n : negative)
        discriminates = discriminates && n["discriminates"].get<bool>();
    out["negative_control"] = negative;
    out["passed"] = passed;
    return out;
}

Error Verifier::trialError(const Error& e, const std::string& where) const
{
    return stickyError() ? fatal(e, where) : e;
}

Result<void> Verifier::fingerprintInputs(const std::vector<const TensorLayout*>& inputs, const BufferSet& buffers, Trial& t,
                                         const std::string& where) const
{
    for (const TensorLayout* l : inputs) {
        if (l->bytes <= kFingerprintBytes) {
            t.inputPrints.push_back(0); // small inputs are compared byte by byte on the host
            continue;
        }
        auto print = TorchBridge::fingerprint(
            RawTensor{reinterpret_cast<void*>(buffers.find(l->name)->ptr()), l->dtype, l->extents, true}, t.fingerprintKey);
        if (!print)
            return trialError(print.error(), where);
        t.inputPrints.push_back(print.value());
    }
    return {};
}

Result<void> Verifier::prepareExpected(const std::vector<const TensorLayout*>& inputs,
                                       const std::vector<std::vector<unsigned char>>& pristine, Expectation& into,
                                       const std::string& where) const
{
    for (size_t i = 0; i < inputs.size(); ++i) {
        auto m = DeviceMemory::allocate(inputs[i]->bytes);
        if (!m)
            return trialError(m.error(), where);
        if (inputs[i]->bytes > 0) {
            const CUresult r = KF_CU(cuMemcpyHtoD, m->ptr(), pristine[i].data(), inputs[i]->bytes);
            if (r != CUDA_SUCCESS)
                return trialError(cuError(r, "cuMemcpyHtoD", __FILE__, __LINE__), where);
        }
        into.inputs[inputs[i]->name] = RawTensor{reinterpret_cast<void*>(m->ptr()), inputs[i]->dtype, inputs[i]->extents, true};
        into.memory.push_back(std::move(m.value()));
    }
    auto libtorch = TorchBridge::prepareReference(m_request.task, into.inputs);
    if (!libtorch)
        return trialError(libtorch.error(), where);
    into.libtorch = std::move(libtorch.value());
    if (auto r = into.libtorch->run(); !r)
        return trialError(r.error(), where);
    into.refs = TorchBridge::Expected{into.libtorch.get(), nullptr, {}};
    into.golden = TorchBridge::runGolden(m_request.task, into.inputs, into.refs.goldenNote);
    into.refs.golden = into.golden.get();
    return {};
}

Result<void> Verifier::compareOutputs(const std::vector<const TensorLayout*>& outputs, const BufferSet& buffers, Trial& t,
                                      const Expectation& expected, bool firstTrialOfShape, nlohmann::json& negativeControls,
                                      Comparison& into, const std::string& where) const
{
    for (size_t o = 0; o < outputs.size(); ++o) {
        const TensorLayout& l = *outputs[o];
        const RawTensor run0{t.outputs[0][o].data(), l.dtype, l.extents, false};
        const RawTensor run1{reinterpret_cast<void*>(buffers.find(l.name)->ptr()), l.dtype, l.extents, true};
        auto judged = TorchBridge::judgeTrial(expected.refs, *l.spec, run0, run1, t.sentinel[0][o].data(), m_request.samples,
                                              firstTrialOfShape);
        if (!judged)
            return trialError(judged.error(), where);
        if (judged->negativeControl)
            negativeControls.push_back(protocol::toJson(*judged->negativeControl));
        OutputCheck c = std::move(judged->check);
        const std::string of = std::to_string(c.elements);
        if (c.unwritten > 0 && into.unwrittenFailure.empty())
            into.unwrittenFailure = l.name + ": " + std::to_string(c.unwritten) + " of " + of + " elements never written (first at " +
                                    formatIndex(c.firstUnwritten.front()) + ")";
        const std::int64_t wrong = c.mismatches - c.unwritten;
        if (wrong > 0 && into.mismatchFailure.empty() && !c.firstMismatches.empty()) {
            const Mismatch& m = c.firstMismatches.front();
            into.mismatchFailure = l.name + ": " + std::to_string(wrong) + " of " + of + " elements outside tolerance (max abs error " +
                                   formatNumber(c.maxAbsError) + "; first at " + formatIndex(m.index) + ": expected " +
                                   formatNumber(m.expected) + ", got " + formatNumber(m.actual) + ")";
            if (c.nonFiniteMismatches > 0)
                into.mismatchFailure += ", " + std::to_string(c.nonFiniteMismatches) + " of them non-finite where the reference differs";
        }
        const double diff = judged->runMaxAbsDiff;
        const std::int64_t d = judged->runDisagreements;
        into.disagreements += d;
        into.outputDisagreements.push_back(d);
        into.maxDiff = std::max(into.maxDiff, diff);
        if (d > 0 && into.disagreeFailure.empty())
            into.disagreeFailure = "the two runs disagree: " + l.name + " differs in " + std::to_string(d) + " of " + of +
                                   " elements (max difference " + formatNumber(diff) + ")";
        into.outs.push_back(protocol::toJson(c));
        into.checks.push_back(std::move(c));
    }
    return {};
}

std::string Verifier::trialFailure(const Trial& t, const Comparison& compared)
{
    std::string failure;
    if (!t.launchError.empty())
        failure = "launch error: " + t.launchError;
    else if (!t.guards.empty())
        failure = guardSentence(t.guards.front(), t.guardWhen.front());
    else if (!t.modified.empty()) {
        const InputChange& c = t.changes.at(t.modified.front()); // runCandidate records a change for each
        failure = "input " + t.modified.front() + " was modified by the candidate (" + std::to_string(c.bytesChanged) +
                  " bytes differ from the pristine copy, the first at byte " + std::to_string(c.firstByte) + ")";
    } else if (!compared.unwrittenFailure.empty())
        failure = compared.unwrittenFailure;
    else if (!compared.mismatchFailure.empty())
        failure = compared.mismatchFailure;
    else if (!compared.disagreeFailure.empty())
        failure = compared.disagreeFailure;
    return failure;
}

nlohmann::json Verifier::trialReport(int trial, std::uint64_t seed, const nlohmann::json& distributions, const std::string& failure,
                                     const Trial& t, const Comparison& compared)
{
    nlohmann::json guards = nlohmann::json::array();
    for (const auto& g : t.guards)
        guards.push_back({{"buffer", g.buffer}, {"side", g.side()}, {"offset_bytes", g.offsetBytes}});
    const bool ran = t.launchError.empty();
    return {{"trial", trial},
            {"seed", seedHex(seed)},
            {"distributions", distributions},
            {"passed", failure.empty()},
            {"failure", failure},
            {"launch_error", t.launchError},
            {"guard_violations", guards},
            {"modified_inputs", t.modified},
            {"runs_agree", ran && compared.disagreements == 0},
            {"run_disagreements", compared.disagreements},
            {"run_max_abs_diff", jsonNumber(compared.maxDiff)},
            {"outputs", compared.outs}};
}

Result<nlohmann::json> Verifier::saveCase(size_t shapeIndex, int trial, std::uint64_t seed, const nlohmann::json& result,
                                          const std::vector<const TensorLayout*>& inputs,
                                          const std::vector<const TensorLayout*>& outputs,
                                          const std::vector<std::vector<unsigned char>>& pristine, const BufferSet& buffers,
                                          const Trial& t, const Expectation& expected, const Comparison& compared,
                                          const std::string& where)
{
    const ShapeRef& shape = m_request.runShapes[shapeIndex];
    m_channel.progress(m_request.id, m_permille, "saving the tensors of shape " + shapeName(shape) + " trial " + std::to_string(trial));
    CaseInfo info;
    info.taskName = m_request.task.name;
    info.taskHash = m_request.taskHash;
    info.candidateFile = m_request.candidate().file;
    info.sourceHash = m_request.sourceHash;
    info.arch = m_request.arch;
    info.shape = shape.binding;
    info.set = shape.set;
    info.shapeIndex = static_cast<int>(shapeIndex);
    info.trial = trial;
    info.seed = seedHex(seed);
    info.inputsFrom = m_request.inputsDir.empty() ? "seeded" : "file";
    info.distributions = result["distributions"];
    info.failure = result["failure"].get<std::string>();
    info.trialReport = result;
    info.environment = m_header.environment();
    std::vector<CaseTensorData> tensors;
    for (size_t i = 0; i < inputs.size(); ++i)
        tensors.push_back({{inputs[i]->name, CaseTensor::Role::Input, 0, inputs[i]->dtype, inputs[i]->extents, {}},
                           pristine[i].data(), pristine[i].size()});
    // Owned here until the case is written: the expected results and run 1's outputs.
    std::vector<std::vector<double>> expectedValues, libtorchValues;
    std::vector<std::vector<unsigned char>> run1Values;
    const std::vector<OutputCheck>& checks = compared.checks;
    for (size_t o = 0; o < outputs.size() && o < checks.size(); ++o) {
        const TensorLayout& l = *outputs[o];
        const bool hasGolden = checks[o].golden.available;
        // An expected result as float64 (golden, or LibTorch's), kept in `owned` until the save.
        auto addExpected = [&](CaseTensor::Role role, bool golden, std::vector<std::vector<double>>& owned) -> Result<void> {
            auto values = TorchBridge::expectedAsDouble(expected.refs, l.name, golden);
            if (!values)
                return trialError(values.error(), where);
            owned.push_back(std::move(values.value()));
            tensors.push_back({{l.name, role, 0, DType::F64, l.extents, {}}, owned.back().data(), owned.back().size() * sizeof(double)});
            return {};
        };
        if (auto r = addExpected(CaseTensor::Role::Expected, hasGolden, expectedValues); !r)
            return r.error();
        if (hasGolden)
            if (auto r = addExpected(CaseTensor::Role::Libtorch, false, libtorchValues); !r)
                return r.error();
        tensors.push_back({{l.name, CaseTensor::Role::Actual, 0, l.dtype, l.extents, {}}, t.outputs[0][o].data(),
                           t.outputs[0][o].size()});
        if (compared.outputDisagreements[o] > 0) {
            run1Values.emplace_back(l.bytes);
            if (auto r = buffers.find(l.name)->download(run1Values.back().data(), m_stream); !r)
                return trialError(r.error(), where);
            tensors.push_back({{l.name, CaseTensor::Role::Actual, 1, l.dtype, l.extents, {}}, run1Values.back().data(),
                               run1Values.back().size()});
        }
        info.outputs.push_back({l.name, l.dtype, checks[o].atolEffective, checks[o].rtol, {t.sentinel[0][o], t.sentinel[1][o]},
                                compared.outs[o]});
    }
    return m_cases->save(info, tensors);
}

Result<nlohmann::json> Verifier::runTrial(size_t shapeIndex, const std::vector<TensorLayout>& layout, int position,
                                          nlohmann::json& negativeControls, bool& saved)
{
    const ShapeRef& shape = m_request.runShapes[shapeIndex];
    const std::uint64_t seed = m_request.seeds[static_cast<size_t>(position)];
    const int trial = m_request.firstTrial + position;
    const std::string where = "shape " + shapeName(shape) + " trial " + std::to_string(trial);

    std::vector<const TensorLayout*> inputs, outputs;
    for (const auto& l : layout) {
        if (l.role == TensorLayout::Role::Input)
            inputs.push_back(&l);
        else if (l.role == TensorLayout::Role::Output)
            outputs.push_back(&l);
    }

    Trial t;
    nlohmann::json distributions = nlohmann::json::object();
    std::vector<std::vector<unsigned char>> pristine;
    auto phaseStart = std::chrono::steady_clock::now();
    auto phase = [&](double& into) {
        into += msSince(phaseStart);
        phaseStart = std::chrono::steady_clock::now();
    };
    // Rule 1: fresh buffers for every trial, the candidate before the reference. The buffers live
    // on after the candidate's last launch only to hold run 1's outputs for the comparison.
    auto buffers = BufferSet::allocate(layout, {TensorLayout::Role::Input, TensorLayout::Role::Output, TensorLayout::Role::Scratch},
                                       deriveSeed(seed, kGuardSalt), m_stream);
    if (!buffers)
        return trialError(buffers.error(), where);
    if (auto r = fillInputs(inputs, buffers.value(), trial, seed, distributions, pristine); !r)
        return trialError(r.error(), where);
    t.fingerprintKey = deriveSeed(seed, kFingerprintSalt);
    if (auto r = fingerprintInputs(inputs, buffers.value(), t, where); !r)
        return r.error();
    phase(m_phases.inputs);
    for (int run = 0; run < 2 && t.launchError.empty(); ++run)
        if (auto r = runCandidate(shape, layout, buffers.value(), pristine, position, run, t); !r)
            return r.error();
    phase(m_phases.candidate);

    Expectation expected;
    if (auto r = prepareExpected(inputs, pristine, expected, where); !r)
        return r.error();
    TorchBridge::synchronize();
    if (auto e = stickyError())
        return fatal(cuError(*e, "the reference", __FILE__, __LINE__), where);
    phase(m_phases.reference);

    const bool firstTrialOfShape = negativeControls.empty();
    if (firstTrialOfShape && !t.launchError.empty())
        for (const TensorLayout* o : outputs) {
            auto nc = TorchBridge::negativeControl(expected.refs, *o->spec);
            if (!nc)
                return trialError(nc.error(), where);
            negativeControls.push_back(protocol::toJson(nc.value()));
        }

    Comparison compared;
    if (t.launchError.empty())
        if (auto r = compareOutputs(outputs, buffers.value(), t, expected, firstTrialOfShape, negativeControls, compared, where); !r)
            return r.error();
    if (auto e = stickyError())
        return fatal(cuError(*e, "the comparison", __FILE__, __LINE__), where);
    phase(m_phases.compare);

    const std::string failure = trialFailure(t, compared);
    nlohmann::json result = trialReport(trial, seed, distributions, failure, t, compared);
    if (m_cases && !failure.empty() && (!saved || m_cases->settings().allFailing)) {
        auto savedCase = saveCase(shapeIndex, trial, seed, result, inputs, outputs, pristine, buffers.value(), t, expected,
                                  compared, where);
        if (!savedCase)
            return savedCase.error();
        saved = saved || savedCase->contains("case");
        result.update(savedCase.value());
    }
    return result;
}

} // namespace kf::device
