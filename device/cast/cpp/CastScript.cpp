// The TorchScript reference of a .cast op: its own translation unit, because <torch/script.h> is
// LibTorch's slowest header to compile.
#include "device/cast/cpp/CastOp.h"

#include <torch/script.h>

#include <sstream>

namespace kf_cast::detail {

ScriptFn loadScript(const std::string& bytes, const std::string& origin)
{
    std::istringstream in(bytes);
    auto module = std::make_shared<torch::jit::Module>();
    try {
        *module = torch::jit::load(in);
        module->eval();
    } catch (const c10::Error& e) {
        throw std::runtime_error(origin + ": its TorchScript reference does not load: " + e.what_without_backtrace());
    }
    return [module](const std::vector<at::Tensor>& inputs) {
        std::vector<c10::IValue> args(inputs.begin(), inputs.end());
        c10::IValue r = module->forward(args);
        std::vector<at::Tensor> outs;
        if (r.isTuple()) {
            for (const auto& e : r.toTupleRef().elements())
                outs.push_back(e.toTensor());
        } else if (r.isTensorList()) {
            for (const at::Tensor& t : r.toTensorVector())
                outs.push_back(t);
        } else {
            outs.push_back(r.toTensor());
        }
        return outs;
    };
}

} // namespace kf_cast::detail
