#pragma once
// Shared by the TorchBridge*.cpp translation units only (it includes ATen, so nothing else may
// include it): the mode LibTorch was initialised in, tensor wrapping, and the result handling
// every reference form (catalog op, op tape, TorchScript) has in common.

#include "device/runner/TorchBridge.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace kf::device::detail {

/// True after init(true) succeeded: device pointers are CUDA memory of device 0.
bool cudaMode();
at::ScalarType scalarType(DType t);
/// The device a RawTensor lives on: CUDA device 0 only in CUDA mode (CPU mode takes host pointers).
at::Device deviceOf(const RawTensor& t);
/// A tensor viewing the caller's memory (no copy, no ownership).
at::Tensor wrap(const RawTensor& t);
/// "what failed: <torch message>" with the torch message cut to its first line (the rest is a
/// C++ backtrace that helps nobody reading a report).
Error torchError(const std::string& what, const c10::Error& e);
Error bridgeError(const std::string& what, const std::string& why, const std::string& hint = {});

/// A task output as the reference produces it: its declared dtype, contiguous, and never an
/// alias of an input (a kernel has to write every element, so the baseline must too).
at::Tensor finishOutput(at::Tensor result, at::ScalarType declared, const std::vector<at::Tensor>& inputs);

/// The results part of every Reference: copy out and convert to float64.
class ReferenceBase : public TorchBridge::Reference {
public:
    Result<void> copyResultsTo(const std::map<std::string, RawTensor>& outputs) override;
    Result<std::vector<double>> resultAsDouble(const std::string& output) override;

    /// The last result of `name`; null with `error` set when there is none.
    const at::Tensor* findResult(const std::string& name, Error& error) const;

protected:
    std::vector<std::string> m_outputNames;   ///< task outputs, in task order
    std::vector<at::Tensor> m_results;        ///< parallel to m_outputNames; undefined before run()
};

/// The TorchScript form (TorchBridgeScript.cpp keeps <torch/script.h> out of the other units).
Result<std::unique_ptr<TorchBridge::Reference>> makeScriptReference(const Task& task, std::vector<at::Tensor> scriptInputs,
                                                                    bool golden);

/// The dtype a reference output is produced in: the declared one, or float64 for a floating
/// output of a golden reference.
at::ScalarType producedType(DType declared, bool golden);

} // namespace kf::device::detail
