// The wire formats of the model connection (WireFormat.h): request bodies and the readers of what
// OpenAI-compatible and Anthropic servers send back, strict about types, lenient about fields
// they may leave out.
#include "engine/synth/WireFormat.h"

#include "engine/core/Text.h"

#include <algorithm>

namespace kf::synth {
namespace {

using Json = nlohmann::json;

Error malformed(std::string why)
{
    return Error::failed("read the model's reply", std::move(why), "the server does not answer as the chosen provider does; check the provider and the base URL").withKind(kModelMalformed);
}

Result<Json> parseJson(std::string_view text, const char* what)
{
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded())
        return malformed(std::string("the server sent ") + what + " that is not JSON");
    if (!j.is_object())
        return malformed(std::string("the server sent ") + what + " that is not a JSON object");
    return j;
}

// The member `key` of `obj` when it is an object and holds that key, else nullptr.
const Json* member(const Json& obj, const char* key)
{
    if (!obj.is_object())
        return nullptr;
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
}

Result<void> appendText(StreamState& state, const Json& piece, const char* where)
{
    if (!piece.is_string())
        return malformed(std::string(where) + " is not a string");
    const auto& s = piece.get_ref<const std::string&>();
    if (state.text.size() + s.size() > state.maxReplyBytes)
        return Error::failed("read the model's reply", "the model's reply passed " + std::to_string(state.maxReplyBytes / 1024) + " KiB", "raise the reply limit or ask for less (max_tokens)").withKind(kModelTooLarge);
    state.text += s;
    return {};
}

Result<void> readCount(const Json& obj, const char* key, long long& out)
{
    const Json* v = member(obj, key);
    if (!v)
        return {};
    if (!v->is_number_integer() && !v->is_number_unsigned())
        return malformed(std::string("the usage count ") + key + " is not an integer");
    const long long n = v->is_number_unsigned() ? static_cast<long long>(std::min<std::uint64_t>(
                                                      v->get<std::uint64_t>(), std::uint64_t(INT64_MAX)))
                                                : v->get<long long>();
    if (n < 0)
        return malformed(std::string("the usage count ") + key + " is negative");
    out = n;
    return {};
}

Result<void> readString(const Json& obj, const char* key, std::string& out)
{
    const Json* v = member(obj, key);
    if (!v)
        return {};
    if (!v->is_string())
        return malformed(std::string("the field ") + key + " is not a string");
    out = v->get<std::string>();
    return {};
}

Error streamError(const Json& error)
{
    std::string type, message;
    if (error.is_object()) {
        if (const Json* t = member(error, "type"); t && t->is_string())
            type = t->get<std::string>();
        if (const Json* m = member(error, "message"); m && m->is_string())
            message = m->get<std::string>();
    } else if (error.is_string()) {
        message = error.get<std::string>();
    }
    if (message.size() > 300)
        message.resize(300);
    const bool busy = type == "overloaded_error" || type == "rate_limit_error";
    return Error::failed("receive the model's reply", "the server stopped the reply with an error" + (type.empty() ? std::string() : " (" + type + ")")
                     + (message.empty() ? std::string() : ": " + message), busy ? "the server is busy; try again later" : "").withKind(busy ? kModelRateLimited : kModelServer);
}

Json messagesJson(const std::vector<ChatMessage>& messages)
{
    Json out = Json::array();
    for (const auto& m : messages)
        out.push_back({{"role", m.role}, {"content", m.content}});
    return out;
}

// OpenAI's usage object, in a chunk or a whole reply.
// Anthropic's usage object, as message_start, message_delta and a whole reply carry it.
Result<void> readAnthropicUsage(const Json& usage, StreamState& state)
{
    if (auto r = readCount(usage, "input_tokens", state.tokensIn); !r)
        return r;
    return readCount(usage, "output_tokens", state.tokensOut);
}

Result<void> readOpenAiUsage(const Json& doc, StreamState& state)
{
    const Json* usage = member(doc, "usage");
    if (!usage)
        return {};
    if (!usage->is_object())
        return malformed("usage is not an object");
    if (auto r = readCount(*usage, "prompt_tokens", state.tokensIn); !r)
        return r;
    return readCount(*usage, "completion_tokens", state.tokensOut);
}

// choices[0] of an OpenAI chunk or reply, or nullptr when there is none.
Result<const Json*> firstChoice(const Json& doc)
{
    const Json* choices = member(doc, "choices");
    if (!choices)
        return static_cast<const Json*>(nullptr);
    if (!choices->is_array())
        return malformed("choices is not an array");
    if (choices->empty())
        return static_cast<const Json*>(nullptr);
    if (!(*choices)[0].is_object())
        return malformed("choices[0] is not an object");
    return &(*choices)[0];
}

// What an OpenAI stream chunk and a whole reply share: an error object, the model, the usage,
// the first choice and its finish_reason. The choice, or nullptr when the document has none.
Result<const Json*> readOpenAiDocument(const Json& doc, StreamState& state)
{
    if (const Json* error = member(doc, "error"))
        return streamError(*error);
    if (auto r = readString(doc, "model", state.model); !r)
        return r.error();
    if (auto r = readOpenAiUsage(doc, state); !r)
        return r.error();
    auto choice = firstChoice(doc);
    if (!choice || !*choice)
        return choice;
    if (auto r = readString(**choice, "finish_reason", state.stopReason); !r)
        return r.error();
    return choice;
}

} // namespace

nlohmann::json openAiRequest(const ModelConfig& config, const std::string& system,
                             const std::vector<ChatMessage>& messages)
{
    Json msgs = Json::array();
    if (!system.empty())
        msgs.push_back({{"role", "system"}, {"content", system}});
    for (auto& m : messagesJson(messages))
        msgs.push_back(std::move(m));
    return {{"model", config.model},
            {"messages", std::move(msgs)},
            {"max_tokens", config.maxTokens},
            {"temperature", config.temperature},
            {"stream", true},
            {"stream_options", {{"include_usage", true}}}};
}

nlohmann::json anthropicRequest(const ModelConfig& config, const std::string& system,
                                const std::vector<ChatMessage>& messages)
{
    Json body = {{"model", config.model},
                 {"messages", messagesJson(messages)},
                 {"max_tokens", config.maxTokens},
                 {"temperature", config.temperature},
                 {"stream", true}};
    if (!system.empty())
        body["system"] = system;
    return body;
}

Result<void> decodeOpenAiEvent(const SseEvent& event, StreamState& state)
{
    if (event.data == "[DONE]") {
        state.done = true;
        return {};
    }
    if (state.done)
        return malformed("the server sent data after [DONE]");
    auto doc = parseJson(event.data, "a stream chunk");
    if (!doc)
        return doc.error();
    auto choice = readOpenAiDocument(*doc, state);
    if (!choice)
        return choice.error();
    if (!*choice)
        return {};
    const Json* delta = member(**choice, "delta");
    if (!delta)
        return {};
    if (!delta->is_object())
        return malformed("choices[0].delta is not an object");
    if (const Json* content = member(*delta, "content"))
        return appendText(state, *content, "choices[0].delta.content");
    return {};
}

Result<void> decodeAnthropicEvent(const SseEvent& event, StreamState& state)
{
    if (event.event == "ping")
        return {};
    if (state.done)
        return malformed("the server sent an event after message_stop");
    auto doc = parseJson(event.data, "an event");
    if (!doc)
        return doc.error();
    std::string type = event.event;
    if (type == "message") {   // a server that leaves out `event:` lines: the data names the type
        if (auto r = readString(*doc, "type", type); !r)
            return r;
    }
    if (type == "error")
        return streamError(doc->contains("error") ? (*doc)["error"] : *doc);
    if (type == "message_start") {
        const Json* message = member(*doc, "message");
        if (!message)
            return {};
        if (!message->is_object())
            return malformed("message_start's message is not an object");
        if (auto r = readString(*message, "model", state.model); !r)
            return r;
        if (const Json* usage = member(*message, "usage"))
            if (auto r = readAnthropicUsage(*usage, state); !r)
                return r;
        return {};
    }
    if (type == "content_block_delta") {
        const Json* delta = member(*doc, "delta");
        if (!delta || !delta->is_object())
            return malformed("content_block_delta has no delta object");
        const Json* dtype = member(*delta, "type");
        if (dtype && dtype->is_string() && dtype->get_ref<const std::string&>() == "text_delta") {
            const Json* text = member(*delta, "text");
            if (!text)
                return malformed("a text_delta has no text");
            return appendText(state, *text, "delta.text");
        }
        return {};   // thinking, tool input and other deltas are not text of the reply
    }
    if (type == "message_delta") {
        if (const Json* delta = member(*doc, "delta")) {
            if (auto r = readString(*delta, "stop_reason", state.stopReason); !r)
                return r;
        }
        if (const Json* usage = member(*doc, "usage"))
            if (auto r = readAnthropicUsage(*usage, state); !r)
                return r;
        return {};
    }
    if (type == "message_stop")
        state.done = true;
    return {};   // content_block_start/stop and future event types
}

Result<void> decodeOpenAiBody(std::string_view body, StreamState& state)
{
    auto doc = parseJson(body, "a reply");
    if (!doc)
        return doc.error();
    auto choice = readOpenAiDocument(*doc, state);
    if (!choice)
        return choice.error();
    if (!*choice)
        return malformed("the reply has no choices");
    const Json* message = member(**choice, "message");
    if (!message || !message->is_object())
        return malformed("choices[0].message is not an object");
    if (const Json* content = member(*message, "content"))
        if (auto r = appendText(state, *content, "choices[0].message.content"); !r)
            return r;
    state.done = true;
    return {};
}

Result<void> decodeAnthropicBody(std::string_view body, StreamState& state)
{
    auto doc = parseJson(body, "a reply");
    if (!doc)
        return doc.error();
    if (const Json* error = member(*doc, "error"))
        return streamError(*error);
    if (auto r = readString(*doc, "model", state.model); !r)
        return r;
    if (auto r = readString(*doc, "stop_reason", state.stopReason); !r)
        return r;
    if (const Json* usage = member(*doc, "usage"))
        if (auto r = readAnthropicUsage(*usage, state); !r)
            return r;
    const Json* content = member(*doc, "content");
    if (!content || !content->is_array())
        return malformed("the reply has no content array");
    for (const Json& block : *content) {
        const Json* type = member(block, "type");
        if (type && type->is_string() && type->get_ref<const std::string&>() == "text") {
            const Json* text = member(block, "text");
            if (!text)
                return malformed("a text block has no text");
            if (auto r = appendText(state, *text, "content[].text"); !r)
                return r;
        }
    }
    state.done = true;
    return {};
}

std::string serverErrorMessage(std::string_view body)
{
    const Json doc = Json::parse(body, nullptr, false);
    if (!doc.is_discarded() && doc.is_object()) {
        if (const Json* error = member(doc, "error")) {
            if (const Json* m = member(*error, "message"); m && m->is_string())
                return text::clipUtf8(m->get<std::string>(), 300);
            if (error->is_string())
                return text::clipUtf8(error->get<std::string>(), 300);
        }
        if (const Json* m = member(doc, "message"); m && m->is_string())
            return text::clipUtf8(m->get<std::string>(), 300);
        if (const Json* m = member(doc, "detail"); m && m->is_string())
            return text::clipUtf8(m->get<std::string>(), 300);
    }
    std::string text = kf::text::clipUtf8(body, 300);
    for (char& c : text)
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
    while (!text.empty() && text.back() == ' ')
        text.pop_back();
    return text;
}

std::string redact(std::string text, std::string_view secret)
{
    if (secret.empty())
        return text;
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 10))
        text.replace(at, secret.size(), "[redacted]");
    return text;
}

} // namespace kf::synth
