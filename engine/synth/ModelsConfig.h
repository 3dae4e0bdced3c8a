#pragma once
// The language models a user has configured (docs/synthesis.md, "Models"): one JSON file,
// `models.json` in KernelForge's configuration folder, shared by `kforge synth` and the
// workbench's settings. Each entry names a wire format, a base URL, a model, the environment
// variable that holds its key (never the key) and its prices; `default` and `escalation` pick
// the models a run uses.

#include "engine/core/Result.h"
#include "engine/synth/ModelClient.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kf::synth {

struct NamedModel {
    std::string name;        ///< the user's label ("local-qwen", "claude"); unique
    ModelConfig config;
};

struct ModelsConfig {
    std::vector<NamedModel> models;
    std::string defaultModel;       ///< a name in `models`, or empty
    std::string escalationModel;    ///< a name in `models`, or empty

    const NamedModel* find(const std::string& name) const;
    std::string toJson() const;
};

/// Whether `name` reads as the name of an environment variable that holds a key, in the usual
/// shape: upper-case letters, digits and '_', not starting with a digit, at most 64 characters
/// (ANTHROPIC_API_KEY). Keys pasted by mistake fail it (sk-..., gsk_..., 32 mixed-case characters),
/// so they are never stored.
bool isKeyVariableName(std::string_view name);

/// $KF_MODELS_FILE, else $XDG_CONFIG_HOME/KernelForge/models.json (~/.config/... without it).
std::filesystem::path modelsConfigPath();

/// Reads the file; a file that does not exist is an empty configuration. Errors name the file, the
/// JSON pointer and what to change (unknown keys, a bad provider, a default naming no model).
Result<ModelsConfig> readModelsConfig(const std::filesystem::path& file);
Result<ModelsConfig> parseModelsConfig(std::string_view text, const std::string& origin);
/// Writes atomically, creating the folder.
Result<void> writeModelsConfig(const std::filesystem::path& file, const ModelsConfig& config);

} // namespace kf::synth
