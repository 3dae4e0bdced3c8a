#include "engine/runner/Protocol.h"

namespace kf::protocol {

Result<nlohmann::json> parseLine(const std::string& line)
{
    try {
        auto j = nlohmann::json::parse(line);
        if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
            return Error{"read a runner message", "the message is not an object with a \"type\"", "", {}, {}};
        return j;
    } catch (const nlohmann::json::exception& e) {
        return Error{"read a runner message", std::string("malformed JSON line: ") + e.what(), "", {}, {}};
    }
}

std::string toLine(const nlohmann::json& message)
{
    // dump() escapes control characters, so the line holds no raw newline.
    return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json errorMessage(std::int64_t id, const Error& e, bool fatal)
{
    return {{"type", "error"}, {"id", id}, {"fatal", fatal}, {"error", {{"what", e.what}, {"why", e.why}, {"hint", e.hint}}}};
}

Error errorFromMessage(const nlohmann::json& m)
{
    Error e;
    if (m.contains("error") && m["error"].is_object()) {
        const auto& x = m["error"];
        e.what = x.value("what", "");
        e.why = x.value("why", "");
        e.hint = x.value("hint", "");
    }
    if (e.why.empty())
        e.why = "the runner reported an error without a reason";
    return e;
}

} // namespace kf::protocol
