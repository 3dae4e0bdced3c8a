// The model connection (ModelClient.h): the request in the provider's wire format, the reply read
// from server-sent events (or one JSON document from servers that ignore "stream": true), retries
// with backoff on 429, 5xx and broken connections, and the API key kept out of every Error.
//
// A stream that ends without its terminator ([DONE], message_stop) is accepted when it carried
// text, with stopReason "incomplete" when the server named no stop reason; without text it is
// kModelMalformed.
#include "engine/synth/ModelClient.h"

#include "engine/synth/Http.h"
#include "engine/synth/Sse.h"
#include "engine/synth/WireFormat.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace kf::synth {
namespace {

using Clock = std::chrono::steady_clock;

std::string stripSlash(std::string url)
{
    while (!url.empty() && url.back() == '/')
        url.pop_back();
    return url;
}

// Sleeps `seconds`, waking every 100 ms or sooner to look at `cancel`; false when it was raised.
bool sleepUnlessCancelled(double seconds, const std::atomic<bool>* cancel)
{
    const auto until = Clock::now()
                       + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, seconds)));
    while (Clock::now() < until) {
        if (cancel && cancel->load())
            return false;
        const Clock::duration left = until - Clock::now();
        std::this_thread::sleep_for(std::min<Clock::duration>(left, std::chrono::milliseconds(100)));
    }
    return !(cancel && cancel->load());
}

// Retry-After in seconds (the delta-seconds form); -1 when absent or an HTTP date.
double retryAfterSeconds(const std::string& value)
{
    if (value.empty() || value.size() > 9 || !std::all_of(value.begin(), value.end(), [](char c) {
            return c >= '0' && c <= '9';
        }))
        return -1;
    return std::stod(value);
}

std::string statusText(long status) { return std::to_string(status); }

Error cancelledError()
{
    return Error::failed("ask the model", "cancelled").withKind(kModelCancelled);
}

// Every field of `e` with `key` redacted: the last line of defence for the API key.
Error scrub(Error e, std::string_view key)
{
    e.what = redact(std::move(e.what), key);
    e.why = redact(std::move(e.why), key);
    e.hint = redact(std::move(e.hint), key);
    e.file = redact(std::move(e.file), key);
    e.pointer = redact(std::move(e.pointer), key);
    return e;
}

// The API key from the variable the settings name; empty for a server without keys.
Result<std::string> apiKey(const ModelConfig& c)
{
    std::string key;
    if (!c.apiKeyEnv.empty()) {
        const char* value = std::getenv(c.apiKeyEnv.c_str());
        if (!value || !*value)
            return Error::failed("ask the model " + c.model, "the environment variable " + c.apiKeyEnv + " that holds the API key is not set", "export " + c.apiKeyEnv + "=<your key> before starting KernelForge, or leave the key "
                         "variable empty for a server without keys").withKind(kModelAuth);
        key = value;
    }
    return key;
}

// The request in the provider's wire format, asking for a stream.
HttpRequest wireRequest(const ModelConfig& c, const std::string& key, const std::string& system,
                        const std::vector<ChatMessage>& messages, const std::atomic<bool>* cancel)
{
    const bool anthropic = c.provider == Provider::Anthropic;
    HttpRequest request;
    request.url = stripSlash(c.baseUrl) + (anthropic ? "/v1/messages" : "/chat/completions");
    request.connectTimeoutS = c.connectTimeoutS;
    request.idleTimeoutS = c.idleTimeoutS;
    // JSON escapes may take six bytes per byte of text; the envelope is small.
    request.maxBodyBytes = c.maxReplyBytes * 6 + 64 * 1024;
    request.maxStreamBytes = std::max<std::size_t>(c.maxReplyBytes * 64, 64u << 20);
    request.cancel = cancel;
    if (anthropic) {
        request.headers = {"content-type: application/json", "anthropic-version: 2023-06-01",
                           "accept: text/event-stream"};
        if (!key.empty())
            request.headers.push_back("x-api-key: " + key);
        request.body = anthropicRequest(c, system, messages).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
        request.headers = {"Content-Type: application/json", "Accept: text/event-stream"};
        if (!key.empty())
            request.headers.push_back("Authorization: Bearer " + key);
        request.body = openAiRequest(c, system, messages).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return request;
}

// One attempt's reply as it is read: SSE bytes through the parser and the provider's decoder,
// new text passed on as it arrives.
struct ReplyReader {
    ReplyReader(bool anthropic, const TextFn& onText, std::size_t maxReplyBytes) : anthropic(anthropic), onText(onText)
    {
        state.maxReplyBytes = maxReplyBytes;
    }

    bool anthropic = false;
    const TextFn& onText;
    StreamState state;
    SseParser parser;
    bool textDelivered = false;

    Result<void> feed(std::string_view bytes, bool last)
    {
        const auto decodeEvent = anthropic ? decodeAnthropicEvent : decodeOpenAiEvent;
        Result<void> failure;
        auto onEvent = [&](const SseEvent& event) {
            if (!failure)
                return;
            const size_t before = state.text.size();
            if (auto r = decodeEvent(event, state); !r) {
                failure = r;
                return;
            }
            if (state.text.size() > before) {
                textDelivered = true;
                if (onText)
                    onText(std::string_view(state.text).substr(before));
            }
        };
        if (auto r = parser.feed(bytes, onEvent); !r)
            return r;
        if (last)
            if (auto r = parser.finish(onEvent); !r)
                return r;
        return failure;
    }

    // The rest of a successful response: the stream's end, or a body that was not streamed.
    Result<void> finish(const HttpResponse& r)
    {
        if (r.streamed)
            return feed({}, true);
        // Some servers stream without saying text/event-stream; most that ignore
        // "stream": true send one JSON document.
        const size_t first = r.body.find_first_not_of(" \t\r\n");
        const std::string_view head = first == std::string::npos ? std::string_view()
                                                                 : std::string_view(r.body).substr(first);
        if (head.starts_with("data:") || head.starts_with("event:") || head.starts_with(":"))
            return feed(r.body, true);
        Result<void> read = anthropic ? decodeAnthropicBody(r.body, state) : decodeOpenAiBody(r.body, state);
        if (read && onText && !state.text.empty())
            onText(state.text);
        return read;
    }
};

// The reply as read, with the usage estimated (four bytes a token) where the server gave none.
void fillReply(ModelReply& reply, StreamState& state, const ModelConfig& c, const std::string& system,
               const std::vector<ChatMessage>& messages)
{
    reply.text = std::move(state.text);
    reply.model = state.model.empty() ? c.model : state.model;
    reply.stopReason = state.stopReason;
    if (state.tokensIn < 0 || state.tokensOut < 0)
        reply.usageEstimated = true;
    if (state.tokensIn < 0) {
        size_t bytes = system.size();
        for (const auto& m : messages)
            bytes += m.content.size();
        state.tokensIn = static_cast<long long>(bytes / 4);
    }
    if (state.tokensOut < 0)
        state.tokensOut = static_cast<long long>(reply.text.size() / 4);
    reply.tokensIn = state.tokensIn;
    reply.tokensOut = state.tokensOut;
}

// A response the server refused for good (not a 429 or 5xx still to be retried), with the key
// scrubbed from it.
Error refusal(const HttpResponse& r, const ModelConfig& c, const std::string& key, const std::string& what,
              const std::string& shownUrl, int attempt)
{
    const std::string quoted = redact(serverErrorMessage(r.body), key);
    const std::string says = quoted.empty() ? std::string() : ": " + quoted;
    if (r.status == 401 || r.status == 403) {
        if (c.apiKeyEnv.empty())
            return Error::failed(what, "the server wants an API key (" + statusText(r.status) + ")" + says, "name the environment variable that holds the key in the model settings").withKind(kModelAuth);
        return scrub(Error::failed(what, "the server refused the API key in $" + c.apiKeyEnv + " (" + statusText(r.status)
                               + "): check it", quoted.empty() ? std::string() : "the server says: " + quoted).withKind(kModelAuth),
                     key);
    }
    if (r.status == 404)
        return scrub(Error::failed(what, "the server has no " + shownUrl + " or no model " + c.model + " (404)" + says, "check the base URL and the model name").withKind(kModelNotFound),
                     key);
    if (r.status == 429)
        return scrub(Error::failed(what, "the server is rate-limiting us (429) after " + std::to_string(attempt)
                               + " attempts" + says, "wait and try again, or lower the request rate").withKind(kModelRateLimited),
                     key);
    if (r.status >= 500)
        return scrub(Error::failed(what, "the server failed (" + statusText(r.status) + ") " + std::to_string(attempt)
                               + (attempt == 1 ? " time" : " times") + says, "check the server's log, or try again later").withKind(kModelServer),
                     key);
    return scrub(Error::failed(what, "the server refused the request (" + statusText(r.status) + ")" + says, "check the model name and the settings (max tokens, temperature)").withKind(kModelServer),
                 key);
}

} // namespace

const char* providerName(Provider p)
{
    return p == Provider::Anthropic ? "anthropic" : "openai";
}

bool parseProvider(std::string_view text, Provider& out)
{
    if (text == "openai") {
        out = Provider::OpenAI;
        return true;
    }
    if (text == "anthropic") {
        out = Provider::Anthropic;
        return true;
    }
    return false;
}

ModelClient::ModelClient(ModelConfig config) : m_config(std::move(config)) {}

Result<ModelReply> ModelClient::complete(const std::string& system, const std::vector<ChatMessage>& messages,
                                         const TextFn& onText, const std::atomic<bool>* cancel) const
{
    const auto start = Clock::now();
    const ModelConfig& c = m_config;
    const bool anthropic = c.provider == Provider::Anthropic;
    auto keyFound = apiKey(c);
    if (!keyFound)
        return keyFound.error();
    const std::string key = std::move(keyFound.value());
    const HttpRequest request = wireRequest(c, key, system, messages, cancel);
    const std::string shownUrl = displayUrl(request.url);
    const std::string what = "ask the model " + c.model + " at " + shownUrl;

    ModelReply reply;
    for (int attempt = 1;; ++attempt) {
        reply.attempts = attempt;
        ReplyReader reader(anthropic, onText, c.maxReplyBytes);
        auto response = httpPost(request, [&](std::string_view bytes) { return reader.feed(bytes, false); });
        if (!response) {
            Error e = response.error();
            if (e.kind == kHttpBroken && attempt <= c.maxRetries && !reader.textDelivered) {
                if (!sleepUnlessCancelled(std::min(c.backoffS * std::pow(2.0, attempt - 1), c.maxBackoffS), cancel))
                    return cancelledError();
                continue;
            }
            if (e.kind == kHttpBroken)
                e.kind = kModelUnreachable;
            if (e.kind == kModelCancelled)
                e.what = what;
            return scrub(std::move(e), key);
        }
        HttpResponse& r = *response;

        if (r.status >= 200 && r.status < 300) {
            if (auto read = reader.finish(r); !read)
                return scrub(read.error(), key);
            StreamState& state = reader.state;
            if (!state.done) {
                if (state.text.empty())
                    return scrub(Error::failed(what, "the server ended the reply before any text and without its end marker ("
                                                 + std::string(anthropic ? "message_stop" : "data: [DONE]") + ")", "check that the server speaks the " + std::string(providerName(c.provider))
                                           + " format, and its log").withKind(kModelMalformed),
                                 key);
                if (state.stopReason.empty())
                    state.stopReason = "incomplete";
            }
            fillReply(reply, state, c, system, messages);
            reply.seconds = std::chrono::duration<double>(Clock::now() - start).count();
            return reply;
        }

        const bool retryable = r.status == 429 || r.status >= 500;
        if (retryable && attempt <= c.maxRetries) {
            double wait = retryAfterSeconds(r.retryAfter);
            if (wait < 0)
                wait = c.backoffS * std::pow(2.0, attempt - 1);
            if (!sleepUnlessCancelled(std::min(wait, c.maxBackoffS), cancel))
                return cancelledError();
            continue;
        }
        return refusal(r, c, key, what, shownUrl, attempt);
    }
}

} // namespace kf::synth
