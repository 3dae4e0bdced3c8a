#pragma once
// kf_cast models: run a TorchScript model with a package's verified kernels substituted, in a
// LibTorch program (docs/cast.md, "Models"). The model's graph is rewritten — no monkey-patching:
// every call site one of the package's ops implements, matched by op, attributes, dtypes,
// layout and the op's shape constraints for the shapes of the example inputs, calls cast::<op>
// instead; every other candidate site is kept and reported with the reason.
//
//     auto pkg = kf_cast::load("model.cast");
//     torch::jit::Module m = kf_cast::loadModel(*pkg, "block", torch::kCUDA);
//     auto inputs = kf_cast::modelInputs(*pkg, "block", torch::kCUDA);
//     kf_cast::Substituted s = kf_cast::substitute(*pkg, m, inputs);
//     auto out = s.module.forward(inputs);
//
// Includes <torch/script.h>.

#include "kf_cast/kf_cast.h"

#include <torch/script.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kf_cast {

/// One candidate call site of a model: an ATen call that a catalog op (and so a package op's
/// reference) computes.
struct Site {
    std::string node;      ///< the value the call produces, as the graph names it
    std::string op;        ///< the catalog op: "add", "rms_norm", ...
    std::string status;    ///< "substituted" or "kept"
    std::string castOp;    ///< the cast:: op that runs there, when substituted
    std::string reason;    ///< why it was kept
};

struct Substituted {
    torch::jit::Module module;   ///< a frozen copy of the model, its forward graph rewritten
    std::vector<Site> report;
};

/// The names of the models `package` carries, in manifest order, with their formats
/// ("torch.export" or "torchscript"; only TorchScript ones load in C++).
std::vector<std::pair<std::string, std::string>> models(const Package& package);

/// Loads model `name`, a TorchScript module, onto `device` in eval mode. Throws
/// std::runtime_error naming the package and the model.
torch::jit::Module loadModel(const Package& package, const std::string& name, const c10::Device& device);

/// The inputs the package gives model `name`: generated from its input description (seeded),
/// or the tensors saved with it. Throws std::runtime_error.
std::vector<c10::IValue> modelInputs(const Package& package, const std::string& name, const c10::Device& device,
                                     std::uint64_t seed = 0);

/// A frozen copy of `module` whose forward graph calls the package's ops where they fit the call
/// sites' tensors for `example`: types are recorded from one run of the unchanged graph on the
/// example inputs. `module` itself is not changed.
Substituted substitute(const Package& package, const torch::jit::Module& module, const std::vector<c10::IValue>& example);

} // namespace kf_cast
