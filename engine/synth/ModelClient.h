#pragma once
// One conversation turn with a language model over HTTP, in either wire format a user may point
// KernelForge at: OpenAI-compatible Chat Completions (vLLM, llama.cpp's server, Ollama, LM Studio,
// hosted APIs) or Anthropic Messages. Streaming (server-sent events), timeouts, retries with
// backoff on 429 and 5xx, and one sentence per failure that says what to do (docs/synthesis.md).
// The API key is read from the environment variable the configuration names, at request time;
// it is never stored in a ModelConfig, a log line, an Error or a reply.

#include "engine/core/Result.h"

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::synth {

enum class Provider { OpenAI, Anthropic };

/// "openai" / "anthropic"; parseProvider accepts those two and returns false otherwise.
const char* providerName(Provider p);
bool parseProvider(std::string_view text, Provider& out);

struct ModelConfig {
    Provider provider = Provider::OpenAI;
    /// OpenAI: the base the path /chat/completions is appended to ("https://api.openai.com/v1",
    /// "http://127.0.0.1:8000/v1"). Anthropic: the base /v1/messages is appended to
    /// ("https://api.anthropic.com").
    std::string baseUrl;
    std::string model;
    /// Name of the environment variable holding the API key; empty for servers without keys.
    std::string apiKeyEnv;
    int maxTokens = 8192;
    double temperature = 0.2;
    double connectTimeoutS = 10;
    /// The longest silence while a reply streams before the request is abandoned.
    double idleTimeoutS = 120;
    /// Retries after 429 or 5xx (and connection resets), with exponential backoff from
    /// `backoffS` (Retry-After wins when the server sends it, capped at `maxBackoffS`).
    int maxRetries = 3;
    double backoffS = 1.0;
    double maxBackoffS = 30.0;
    /// A reply longer than this many bytes of text is refused (Error kind kModelTooLarge).
    std::size_t maxReplyBytes = 512 * 1024;
    /// Prices in US dollars per million tokens, for budgets (0: unknown, counted as free).
    double priceInPerMTok = 0;
    double priceOutPerMTok = 0;
};

struct ChatMessage {
    std::string role;    ///< "user" or "assistant"
    std::string content;
};

struct ModelReply {
    std::string text;          ///< the assistant's whole text (all deltas joined)
    std::string model;         ///< the model the server says answered
    std::string stopReason;    ///< "stop"/"end_turn"/"length"/"max_tokens"... as the server said
    long long tokensIn = 0;    ///< from the server's usage; estimated (bytes/4) when it sent none
    long long tokensOut = 0;
    bool usageEstimated = false;
    int attempts = 1;          ///< HTTP requests made (retries included)
    double seconds = 0;        ///< wall time of the call, retries included
};

/// Error::kind values of ModelClient::complete.
inline constexpr const char* kModelAuth = "model_auth";               ///< 401/403, or the key variable unset
inline constexpr const char* kModelNotFound = "model_not_found";      ///< 404 (wrong base URL or model)
inline constexpr const char* kModelUnreachable = "model_unreachable"; ///< refused, DNS, TLS, timeout
inline constexpr const char* kModelRateLimited = "model_rate_limited";///< 429 after every retry
inline constexpr const char* kModelServer = "model_server";           ///< 5xx after every retry, other 4xx
inline constexpr const char* kModelMalformed = "model_malformed";     ///< a body or event we cannot read
inline constexpr const char* kModelTooLarge = "model_too_large";      ///< more than maxReplyBytes
inline constexpr const char* kModelCancelled = "cancelled";           ///< the cancel flag was raised

using TextFn = std::function<void(std::string_view delta)>;

class ModelClient {
public:
    explicit ModelClient(ModelConfig config);
    const ModelConfig& config() const { return m_config; }

    /// Sends `system` and `messages` (streaming), calls `onText` with each text delta as it
    /// arrives (on the calling thread), and returns the whole reply. `cancel`, when given, is
    /// polled while waiting: raising it ends the call within about 100 ms with kModelCancelled.
    Result<ModelReply> complete(const std::string& system, const std::vector<ChatMessage>& messages,
                                const TextFn& onText = {}, const std::atomic<bool>* cancel = nullptr) const;

private:
    ModelConfig m_config;
};

} // namespace kf::synth
