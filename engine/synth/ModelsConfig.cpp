#include "engine/synth/ModelsConfig.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/core/UserConfig.h"

#include <cctype>
#include <cstdlib>
#include <set>
#include <system_error>

namespace kf::synth {

namespace fs = std::filesystem;
using kf::json::Json;

const NamedModel* ModelsConfig::find(const std::string& name) const
{
    for (const NamedModel& m : models)
        if (m.name == name)
            return &m;
    return nullptr;
}

std::string ModelsConfig::toJson() const
{
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["default"] = defaultModel;
    j["escalation"] = escalationModel;
    j["models"] = nlohmann::ordered_json::array();
    for (const NamedModel& m : models) {
        const ModelConfig& c = m.config;
        j["models"].push_back(nlohmann::ordered_json{{"name", m.name}, {"provider", providerName(c.provider)}, {"base_url", c.baseUrl},
                                                     {"model", c.model}, {"api_key_env", c.apiKeyEnv}, {"max_tokens", c.maxTokens},
                                                     {"temperature", c.temperature}, {"price_in_per_mtok", c.priceInPerMTok},
                                                     {"price_out_per_mtok", c.priceOutPerMTok}});
    }
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

bool isKeyVariableName(std::string_view name)
{
    if (name.empty() || name.size() > 64 || std::isdigit(static_cast<unsigned char>(name[0])))
        return false;
    for (char c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

fs::path modelsConfigPath()
{
    return userConfigFile("KF_MODELS_FILE", "models.json");
}

Result<ModelsConfig> parseModelsConfig(std::string_view text, const std::string& origin)
{
    auto doc = json::parseText(text, origin);
    if (!doc)
        return doc.error();
    ModelsConfig out;
    try {
        json::Object o(*doc, "");
        if (o.integer("schema_version") != 1)
            json::fail(o.at("schema_version"), "schema_version must be 1");
        out.defaultModel = o.stringOr("default", "");
        out.escalationModel = o.stringOr("escalation", "");
        std::set<std::string> names;
        if (const Json* list = o.optional("models")) {
            const Json& arr = json::asArray(*list, o.at("models"));
            if (arr.size() > 256)
                json::fail(o.at("models"), "at most 256 models");
            for (size_t i = 0; i < arr.size(); ++i) {
                json::Object m(arr[i], json::child(o.at("models"), i));
                NamedModel n;
                n.name = m.string("name");
                if (n.name.empty() || n.name.size() > 128)
                    json::fail(m.at("name"), "a name of 1 to 128 characters");
                if (!names.insert(n.name).second)
                    json::fail(m.at("name"), "another model has the name \"" + n.name + "\"");
                const std::string provider = m.string("provider");
                if (!parseProvider(provider, n.config.provider))
                    json::fail(m.at("provider"), "provider must be \"openai\" (Chat Completions) or \"anthropic\" (Messages)");
                n.config.baseUrl = m.string("base_url");
                if (n.config.baseUrl.rfind("http://", 0) != 0 && n.config.baseUrl.rfind("https://", 0) != 0)
                    json::fail(m.at("base_url"), "base_url must start with http:// or https://");
                n.config.model = m.string("model");
                n.config.apiKeyEnv = m.stringOr("api_key_env", "");
                if (!n.config.apiKeyEnv.empty() && !isKeyVariableName(n.config.apiKeyEnv))
                    json::fail(m.at("api_key_env"), "api_key_env names the environment variable that holds the key (upper-case "
                                                    "letters, digits and _, like ANTHROPIC_API_KEY), never the key itself");
                const std::int64_t maxTokens = m.integerOr("max_tokens", n.config.maxTokens);
                if (maxTokens < 1 || maxTokens > 1000000)
                    json::fail(m.at("max_tokens"), "max_tokens must be from 1 to 1000000");
                n.config.maxTokens = int(maxTokens);
                n.config.temperature = m.numberOr("temperature", n.config.temperature);
                if (!(n.config.temperature >= 0 && n.config.temperature <= 2))
                    json::fail(m.at("temperature"), "temperature must be from 0 to 2");
                n.config.priceInPerMTok = m.numberOr("price_in_per_mtok", 0);
                n.config.priceOutPerMTok = m.numberOr("price_out_per_mtok", 0);
                if (!(n.config.priceInPerMTok >= 0 && n.config.priceInPerMTok < 1e6))
                    json::fail(m.at("price_in_per_mtok"), "a price in US dollars per million tokens, 0 or more");
                if (!(n.config.priceOutPerMTok >= 0 && n.config.priceOutPerMTok < 1e6))
                    json::fail(m.at("price_out_per_mtok"), "a price in US dollars per million tokens, 0 or more");
                m.finish();
                out.models.push_back(std::move(n));
            }
        }
        o.finish();
        if (!out.defaultModel.empty() && !out.find(out.defaultModel))
            json::fail("/default", "no model is named \"" + out.defaultModel + "\"");
        if (!out.escalationModel.empty() && !out.find(out.escalationModel))
            json::fail("/escalation", "no model is named \"" + out.escalationModel + "\"");
    } catch (const json::SchemaError& e) {
        return Error::inFile(origin, e.pointer, "read the model settings", e.message, "fix it, or edit the models in the workbench's settings");
    }
    return out;
}

Result<ModelsConfig> readModelsConfig(const fs::path& file)
{
    std::error_code ec;
    if (!fs::exists(file, ec))
        return ModelsConfig{};
    if (!fs::is_regular_file(file, ec) || fs::file_size(file, ec) > (1 << 20))
        return Error::inFile(file.string(), {}, "read the model settings", "not a regular file of at most 1 MiB");
    auto text = readFileBytes(file);
    if (!text)
        return text.error();
    return parseModelsConfig(*text, file.string());
}

Result<void> writeModelsConfig(const fs::path& file, const ModelsConfig& config)
{
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    return writeFileAtomic(file, config.toJson());
}

} // namespace kf::synth
