// The TorchScript reference: a module saved with torch.jit.save, loaded once and called with the
// task inputs in the order the task names them. Its own unit because <torch/script.h> is the
// slowest header of LibTorch to compile.
#include "device/runner/TorchBridgeInternal.h"
#include "engine/core/Files.h"
#include "engine/task/TaskFiles.h"

#include <torch/script.h>

#include <filesystem>

namespace kf::device::detail {

namespace {

class ScriptReference final : public ReferenceBase {
public:
    ScriptReference(torch::jit::Module module, std::vector<at::Tensor> inputs, const Task& task, bool golden)
        : m_module(std::move(module)), m_inputs(std::move(inputs)), m_golden(golden)
    {
        for (const auto& t : m_inputs)
            m_args.emplace_back(t);
        for (const auto& out : task.outputs) {
            m_outputNames.push_back(out.name);
            m_declared.push_back(producedType(out.dtype, golden));
        }
        m_results.resize(m_outputNames.size());
    }

    Result<void> run() override
    {
        const std::string what = "reference TorchScript module";
        try {
            // NoGradGuard rather than InferenceMode: the JIT's profiling executor records on
            // ordinary tensors and is tested that way.
            at::NoGradGuard noGrad;
            c10::IValue out = m_module.forward(m_args);
            std::vector<at::Tensor> tensors;
            if (out.isTensor()) {
                tensors.push_back(out.toTensor());
            } else if (out.isTuple()) {
                for (const auto& e : out.toTupleRef().elements()) {
                    if (!e.isTensor())
                        return bridgeError(what, what + " returned a tuple holding a " + e.tagKind() +
                                                     "; return a tensor or a tuple of tensors");
                    tensors.push_back(e.toTensor());
                }
            } else if (out.isTensorList()) {
                for (const at::Tensor& t : out.toTensorVector())
                    tensors.push_back(t);
            } else {
                return bridgeError(what, what + " returned a " + out.tagKind() +
                                             "; return a tensor or a tuple of tensors");
            }
            if (tensors.size() != m_outputNames.size())
                return bridgeError(what, what + " returned " + std::to_string(tensors.size()) +
                                             " tensor(s) but the task has " + std::to_string(m_outputNames.size()) +
                                             " output(s); they map to the outputs in order");
            for (size_t i = 0; i < tensors.size(); ++i) {
                // A module that casts to a lower precision inside is no golden result.
                if (m_golden && m_declared[i] == at::kDouble && tensors[i].scalar_type() != at::kDouble)
                    return bridgeError(what, "converted to float64, the TorchScript module still returns output " +
                                                 m_outputNames[i] + " as " + c10::toString(tensors[i].scalar_type()) +
                                                 " (it casts inside)");
                m_results[i] = finishOutput(std::move(tensors[i]), m_declared[i], m_inputs);
            }
            return {};
        } catch (const c10::Error& e) {
            return torchError(what, e);
        } catch (const std::exception& e) {
            return bridgeError(what, what + " failed: " + e.what());
        }
    }

private:
    torch::jit::Module m_module;
    std::vector<at::Tensor> m_inputs;
    std::vector<c10::IValue> m_args;        ///< built once: run() does no argument marshalling
    std::vector<at::ScalarType> m_declared;
    bool m_golden = false;
};

} // namespace

Result<std::unique_ptr<TorchBridge::Reference>> makeScriptReference(const Task& task, std::vector<at::Tensor> scriptInputs,
                                                                    bool golden)
{
    const std::filesystem::path spelled = task.directory / task.reference.torchscript;
    const std::string what = "load the TorchScript reference"; // the file goes in Error::file
    std::error_code ec;
    if (task.reference.torchscript.empty())
        return bridgeError(what, "the task names no TorchScript file");
    if (!std::filesystem::exists(spelled, ec))
        return Error::inFile(spelled.string(), {}, what, "the TorchScript file does not exist", "save the module with torch.jit.save into the task folder");
    // Inside the task folder once links are followed, and a regular file (a FIFO would block the
    // load): engine/task/TaskFiles.h. The module is loaded from the resolved path.
    auto resolved = resolveTaskFile(task.directory, task.reference.torchscript);
    if (!resolved)
        return resolved.error();
    if (auto regular = openRegularFile(*resolved); !regular) {
        Error e = regular.error();
        e.file = spelled.string();
        return e;
    }
    const std::filesystem::path file = *resolved;
    try {
        // Parameters and buffers go where the inputs are (CUDA device 0 in CUDA mode).
        std::optional<c10::Device> device;
        if (cudaMode())
            device = c10::Device(c10::kCUDA, 0);
        torch::jit::Module module = torch::jit::load(file.string(), device);
        module.eval();
        if (golden)
            module.to(at::kDouble);
        return std::unique_ptr<TorchBridge::Reference>(
            std::make_unique<ScriptReference>(std::move(module), std::move(scriptInputs), task, golden));
    } catch (const c10::Error& e) {
        Error err = torchError(what, e);
        err.file = spelled.string();
        return err;
    }
}

} // namespace kf::device::detail
