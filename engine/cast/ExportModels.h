#pragma once
// Internal to engine/cast: the models a .cast package carries (docs/cast-format.md, "Models") —
// each read and checked before anything is compiled, so a bad file fails fast, then written with
// its sample inputs and its manifest entry.

#include "engine/cast/CastExport.h"
#include "engine/cast/CastModel.h"
#include "engine/cast/PackageFiles.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kf::cast::detail {

/// A model's files as read, and what inspectModel found in it.
struct ModelFiles {
    std::string name, format, modelBytes, inputsBytes, inputsKind;
    ModelInfo info;
};

/// Reads and checks every model; `opNames` are the ops the package will hold (a model may call
/// only those).
Result<std::vector<ModelFiles>> readModels(const std::vector<ModelExport>& models, const std::set<std::string>& opNames);

/// Each op's name and its reference's steps: what opsUsable matches a model's graph against.
using OpTapes = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// Adds the model's files to `files`; returns its manifest entry.
Result<nlohmann::json> writeModel(ModelFiles& model, const OpTapes& tapes, PackageFiles& files);

} // namespace kf::cast::detail
