#pragma once
// One HTTP POST through libcurl for the model connection (ModelClient.h): a JSON body out, the
// reply streamed to a callback (server-sent events) or read whole up to a cap; connect and idle
// timeouts; a cancel flag polled every 100 ms or sooner; TLS peers verified (libcurl's default,
// never turned off). Failures are one sentence that tells a refused connection from a name that
// does not resolve, a TLS failure, a timeout and a cancel. Request headers (they carry the API
// key) are never quoted in an Error.

#include "engine/core/Result.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::synth {

/// Error::kind of a connection that broke after it was made (reset, closed early, nothing
/// received): ModelClient retries these.
inline constexpr const char* kHttpBroken = "http_broken";

struct HttpRequest {
    std::string url;
    /// "Name: value" lines. They may hold secrets: nothing here is ever reported.
    std::vector<std::string> headers;
    std::string body;
    double connectTimeoutS = 10;
    /// Abandon the request after this many seconds without a byte from the server.
    double idleTimeoutS = 120;
    /// A body read whole (not streamed) may not pass this (Error kind kModelTooLarge).
    std::size_t maxBodyBytes = 4 * 1024 * 1024;
    /// A streamed body may not pass this either (a server that streams forever).
    std::size_t maxStreamBytes = 256 * 1024 * 1024;
    const std::atomic<bool>* cancel = nullptr;
};

struct HttpResponse {
    long status = 0;
    std::string contentType;   ///< the Content-Type header, as sent
    std::string retryAfter;    ///< the Retry-After header, as sent ("" when absent)
    bool streamed = false;     ///< the body went to the stream callback (2xx, text/event-stream)
    std::string body;          ///< the body, when not streamed
};

/// Receives the bytes of a 2xx text/event-stream body as they arrive; an Error stops the
/// transfer and is what httpPost returns.
using HttpStreamFn = std::function<Result<void>(std::string_view bytes)>;

/// POSTs `request`. A 4xx or 5xx is a response, not an Error; Errors are failures to talk
/// (kinds: kModelUnreachable, kHttpBroken, kModelCancelled, kModelTooLarge, or the stream
/// callback's own).
Result<HttpResponse> httpPost(const HttpRequest& request, const HttpStreamFn& onStream);

/// "scheme://host:port/path" of `url` without user, password, query or fragment (for messages);
/// `url` itself when libcurl cannot read it.
std::string displayUrl(const std::string& url);

} // namespace kf::synth
