#pragma once
// A model inside a .cast package (docs/cast-format.md, "Models"): a torch.export program
// (`torch.export.save`, a .pt2 zip) or a TorchScript module (`torch.jit.save`). Both are zips
// from elsewhere, so they go through the same archive checks as the package, and then through
// rules that keep loading them free of arbitrary code: a .pt2 may hold only its program
// models/model.json, both payload configs, the raw payloads they name and its sample inputs —
// no pickled payload (a legacy data/weights/model.pt included), no custom object, no
// AOTInductor or ExecuTorch binary. device/cast/python/kernelforge_cast/_model.py applies the
// same rules. What the program calls is read from its serialized graph,
// so the exporter can say which packaged ops it may use and the checker can refuse a model that
// calls a cast:: op the package lacks.

#include "engine/cast/CastArchive.h"
#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kf::cast {

inline constexpr const char* kModelTorchExport = "torch.export";
inline constexpr const char* kModelTorchScript = "torchscript";

struct ModelTensor {
    std::string name;
    std::string dtype;        ///< fp32, fp16, ... (DType names), or the serialized code when unknown
    nlohmann::json shape;     ///< integers, and strings for symbolic extents
};

struct ModelInfo {
    std::string format;                  ///< kModelTorchExport or kModelTorchScript
    std::string torchVersion;            ///< the torch that wrote a .pt2; empty for TorchScript
    std::vector<ModelTensor> inputs;     ///< a .pt2's user inputs as exported; empty for TorchScript
    std::vector<std::string> graphOps;   ///< what the graph calls, sorted: "aten.add.Tensor", "cast.rms_norm"
    std::vector<std::string> castOps;    ///< the cast:: operators among them (already substituted)
    bool hasSampleInputs = false;        ///< a .pt2 carries the inputs it was exported with
};

/// Checks and describes the model file `bytes`; `origin` names it in errors ("block.pt2").
Result<ModelInfo> inspectModel(std::string_view bytes, const std::string& origin);
/// The same for a model archive already read (what inspectModel does after readArchiveBytes).
Result<ModelInfo> inspectModelArchive(const Archive& archive, const std::string& origin);

/// A model's inputs as the manifest writes them: [{name, dtype, shape}].
nlohmann::json modelInputsJson(const ModelInfo& model);

/// The catalog op (task-schema.md) an ATen overload of a graph computes, or "" when none:
/// "aten.rms_norm.default" -> "rms_norm". The Python runtime's substitution reads call sites
/// with the same table (device/cast/python/kernelforge_cast/_substitute.py).
std::string catalogOpOfAten(std::string_view target);

/// The packaged ops a model may use: those whose reference tape's steps are all among the
/// catalog ops its graph calls (`tapes`: op name -> the catalog ops of its steps).
std::vector<std::string> opsUsable(const ModelInfo& model,
                                   const std::vector<std::pair<std::string, std::vector<std::string>>>& tapes);

} // namespace kf::cast
