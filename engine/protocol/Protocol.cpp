#include "engine/protocol/Protocol.h"

#include "engine/core/JsonReader.h"

namespace kf::protocol {

namespace {

Error lineError(std::string why, std::string pointer = {})
{
    return Error::inFile({}, std::move(pointer), "read a runner protocol message", std::move(why));
}

} // namespace

Result<void> checkVersion(const nlohmann::json& m, From from)
{
    const char* them = from == From::Runner ? "the runner" : "the client";
    const char* us = from == From::Runner ? "this KernelForge" : "this runner";
    auto v = m.find("protocol_version");
    std::string theirs;
    if (v == m.end()) {
        // Protocol 1 named its version only in hello, as "protocol".
        auto old = m.find("protocol");
        theirs = old != m.end() && old->is_number_integer() ? "protocol " + old->dump() : "no protocol version";
    } else if (!v->is_number_integer()) {
        return Error::inFile({}, "/protocol_version", "read a runner protocol message", "protocol_version is not an integer");
    } else if (v->get<std::int64_t>() == kVersion) {
        return {};
    } else {
        theirs = "protocol " + v->dump();
    }
    return Error::inFile({}, "/protocol_version", "talk to the runner", std::string(them) + " speaks " + theirs + " and " + us + " speaks protocol " + std::to_string(kVersion), "install the kforge-runner built with this KernelForge (or point $KF_RUNNER at it)");
}

Result<nlohmann::json> parseLine(const std::string& line, From from)
{
    if (line.size() > kMaxLineBytes)
        return lineError("a line of " + std::to_string(line.size() >> 20) + " MiB, longer than the " +
                         std::to_string(kMaxLineBytes >> 20) + " MiB a message may have");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
        std::string why = e.what();
        // nlohmann's "[json.exception.parse_error.101] " prefix means nothing to a user.
        if (auto tag = why.find("[json.exception."); tag != std::string::npos)
            if (auto close = why.find("] ", tag); close != std::string::npos)
                why.erase(tag, close + 2 - tag);
        return lineError("malformed JSON line: " + why);
    }
    if (!j.is_object())
        return lineError("the message is " + kf::json::describe(j) + ", not an object");
    if (!j.contains("type") || !j["type"].is_string())
        return lineError("the message has no string \"type\"", "/type");
    if (auto v = checkVersion(j, from); !v)
        return v.error();
    return j;
}

std::string toLine(nlohmann::json message)
{
    if (message.is_object())
        message["protocol_version"] = kVersion;
    // dump() escapes control characters, so the line holds no raw newline.
    return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json errorMessage(std::int64_t id, const Error& e, bool fatal)
{
    nlohmann::json error = {{"what", e.what}, {"why", e.why}, {"hint", e.hint}};
    if (!e.pointer.empty())
        error["pointer"] = e.pointer; // where in the request the problem is
    if (!e.kind.empty())
        error["kind"] = e.kind;
    return {{"type", "error"}, {"id", id}, {"fatal", fatal}, {"error", error}};
}

Error errorFromMessage(const nlohmann::json& m)
{
    Error e;
    if (m.contains("error") && m["error"].is_object()) {
        const auto& x = m["error"];
        auto text = [&](const char* k) {
            auto it = x.find(k);
            return it != x.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        e.what = text("what");
        e.why = text("why");
        e.hint = text("hint");
        e.pointer = text("pointer");
        e.kind = text("kind");
    }
    if (e.why.empty())
        e.why = "the runner reported an error without a reason";
    return e;
}

} // namespace kf::protocol
