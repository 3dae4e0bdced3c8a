#pragma once
// The two wire formats of ModelClient (ModelClient.h) as pure functions, shared with the fuzz
// target: the request bodies, one decoder per server-sent event of each format (OpenAI-compatible
// Chat Completions chunks, Anthropic Messages events), the non-streaming JSON replies some
// servers send instead, and the one-line reading of a server's error body. No I/O.

#include "engine/core/Result.h"
#include "engine/synth/ModelClient.h"
#include "engine/synth/Sse.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kf::synth {

/// What the events of one reply have said so far.
struct StreamState {
    std::string text;            ///< the text deltas joined
    std::string model;           ///< the model the server names, if it did
    std::string stopReason;      ///< finish_reason / stop_reason, if sent
    long long tokensIn = -1;     ///< -1: the server has not said
    long long tokensOut = -1;
    bool done = false;           ///< `data: [DONE]` or `message_stop` seen
    /// The text may not grow past this (Error kind kModelTooLarge).
    std::size_t maxReplyBytes = 512 * 1024;
};

/// The JSON bodies POSTed to {baseUrl}/chat/completions and {baseUrl}/v1/messages (streaming).
nlohmann::json openAiRequest(const ModelConfig& config, const std::string& system,
                             const std::vector<ChatMessage>& messages);
nlohmann::json anthropicRequest(const ModelConfig& config, const std::string& system,
                                const std::vector<ChatMessage>& messages);

/// One event of an OpenAI-compatible stream: a chunk whose choices[0].delta.content is text,
/// `[DONE]`, or an `{"error":...}` object some servers send mid-stream (kModelServer).
Result<void> decodeOpenAiEvent(const SseEvent& event, StreamState& state);
/// One event of an Anthropic Messages stream: message_start, content_block_delta (text_delta),
/// message_delta, message_stop, ping, error (kModelRateLimited for overloaded_error and
/// rate_limit_error, else kModelServer); other events are ignored.
Result<void> decodeAnthropicEvent(const SseEvent& event, StreamState& state);
/// The same provider's whole reply as one JSON document (servers that ignore "stream": true).
Result<void> decodeOpenAiBody(std::string_view body, StreamState& state);
Result<void> decodeAnthropicBody(std::string_view body, StreamState& state);

/// The message of a server's error body: JSON `error.message` (both formats) or `message`,
/// else the first 300 bytes of the body as text; "" for an empty body.
std::string serverErrorMessage(std::string_view body);

/// `text` with every occurrence of `secret` replaced by "[redacted]" (unchanged when empty).
std::string redact(std::string text, std::string_view secret);

} // namespace kf::synth
