// libcurl under the model connection (Http.h): one easy handle per request, driven through a
// multi handle so the cancel flag and the idle clock are checked at least every 100 ms however
// quiet the server is.
#include "engine/synth/Http.h"

#include "engine/synth/ModelClient.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>

namespace kf::synth {
namespace {

using Clock = std::chrono::steady_clock;

void globalInit()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct UrlParts {
    std::string scheme, host, port, path;
};

UrlParts urlParts(const std::string& url)
{
    UrlParts parts;
    CURLU* u = curl_url();
    if (!u)
        return parts;
    if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
        auto get = [u](CURLUPart part, unsigned flags) {
            char* s = nullptr;
            std::string out;
            if (curl_url_get(u, part, &s, flags) == CURLUE_OK && s)
                out = s;
            curl_free(s);
            return out;
        };
        parts.scheme = get(CURLUPART_SCHEME, 0);
        parts.host = get(CURLUPART_HOST, 0);
        parts.port = get(CURLUPART_PORT, CURLU_DEFAULT_PORT);
        parts.path = get(CURLUPART_PATH, 0);
    }
    curl_url_cleanup(u);
    return parts;
}

std::string hostPort(const std::string& url)
{
    const UrlParts p = urlParts(url);
    if (p.host.empty())
        return displayUrl(url);
    return p.port.empty() ? p.host : p.host + ":" + p.port;
}

std::string seconds(double s)
{
    std::string t = std::to_string(s);
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.')
        t.pop_back();
    return t;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix)
{
    if (s.size() < prefix.size())
        return false;
    for (size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

std::string trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return std::string(s);
}

struct Transfer {
    const HttpRequest* request = nullptr;
    const HttpStreamFn* onStream = nullptr;
    CURL* easy = nullptr;
    HttpResponse response;
    Clock::time_point lastByte;
    std::size_t streamedBytes = 0;
    bool decided = false;        // streamed or not, decided at the first body byte
    bool failed = false;         // a callback stopped the transfer with `error`
    Error error;
};

size_t onHeader(char* data, size_t size, size_t count, void* user)
{
    auto* t = static_cast<Transfer*>(user);
    const std::string_view line(data, size * count);
    t->lastByte = Clock::now();
    if (startsWithNoCase(line, "HTTP/")) {   // a new response (after 100 Continue): start over
        t->response.contentType.clear();
        t->response.retryAfter.clear();
    } else if (startsWithNoCase(line, "content-type:")) {
        t->response.contentType = trim(line.substr(13));
    } else if (startsWithNoCase(line, "retry-after:")) {
        t->response.retryAfter = trim(line.substr(12));
    }
    return size * count;
}

size_t onBody(char* data, size_t size, size_t count, void* user)
{
    auto* t = static_cast<Transfer*>(user);
    const std::string_view bytes(data, size * count);
    t->lastByte = Clock::now();
    if (!t->decided) {
        t->decided = true;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->response.status);
        std::string type = t->response.contentType;
        std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
        t->response.streamed = t->response.status >= 200 && t->response.status < 300
                               && type.find("text/event-stream") != std::string::npos && *t->onStream;
    }
    if (t->response.streamed) {
        t->streamedBytes += bytes.size();
        if (t->streamedBytes > t->request->maxStreamBytes) {
            t->failed = true;
            t->error = Error::failed("receive the model's reply", "the server streamed more than " + std::to_string(t->request->maxStreamBytes >> 20)
                                 + " MiB without ending the reply").withKind(kModelTooLarge);
            return 0;   // not the size given: libcurl stops with CURLE_WRITE_ERROR
        }
        if (auto r = (*t->onStream)(bytes); !r) {
            t->failed = true;
            t->error = r.error();
            return 0;   // not the size given: libcurl stops with CURLE_WRITE_ERROR
        }
        return bytes.size();
    }
    if (t->response.body.size() + bytes.size() > t->request->maxBodyBytes) {
        t->failed = true;
        t->error = Error::failed("receive the model's reply", "the server's reply passed " + std::to_string(t->request->maxBodyBytes / 1024) + " KiB", "raise the reply limit or ask for less (max_tokens)").withKind(kModelTooLarge);
        return 0;   // not the size given: libcurl stops with CURLE_WRITE_ERROR
    }
    t->response.body.append(bytes);
    return bytes.size();
}

Error curlError(CURLcode code, const HttpRequest& request, const char* detail)
{
    const std::string where = hostPort(request.url);
    const std::string what = "send the request to " + displayUrl(request.url);
    std::string more = detail && *detail ? std::string(" (") + detail + ")" : std::string(curl_easy_strerror(code));
    switch (code) {
    case CURLE_COULDNT_CONNECT:
        return Error::failed(what, "nothing listens at " + where + ": is the server running?", "start the model server, or check the base URL's host and port").withKind(kModelUnreachable);
    case CURLE_COULDNT_RESOLVE_HOST:
        return Error::failed(what, "the host name of " + where + " does not resolve (DNS)", "check the base URL's host name and the network").withKind(kModelUnreachable);
    case CURLE_COULDNT_RESOLVE_PROXY:
        return Error::failed(what, "the proxy's host name does not resolve (DNS)", "check the proxy settings (https_proxy)").withKind(kModelUnreachable);
    case CURLE_OPERATION_TIMEDOUT:
        return Error::failed(what, "no connection to " + where + " within " + seconds(request.connectTimeoutS) + " s", "check the base URL and the network, or raise the connect timeout").withKind(kModelUnreachable);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
        return Error::failed(what, "the TLS connection to " + where + " failed" + more, "check that the server speaks https and that its certificate is valid for that host (or use "
                     "http:// for a local server)").withKind(kModelUnreachable);
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        return Error::failed(what, "the base URL " + displayUrl(request.url) + " is not an http(s) URL libcurl can use", "write it as http://host:port/... or https://...").withKind(kModelUnreachable);
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return Error::failed(what, "the connection to " + where + " broke" + more, "try again; check the server's log").withKind(kHttpBroken);
    default:
        return Error::failed(what, "the request to " + where + " failed" + more).withKind(kModelUnreachable);
    }
}

/// The transfer's options: a POST of the body with the headers, the connect timeout, the
/// callbacks into `t`, HTTP(S) only.
void setOptions(CURL* e, const HttpRequest& request, curl_slist* headers, Transfer& t, char* errorBuffer)
{
    curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::max(1.0, request.connectTimeoutS * 1000)));
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errorBuffer);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");   // gzip and friends, decoded by libcurl
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(e, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(e, CURLOPT_USERAGENT, "KernelForge");
}

} // namespace

std::string displayUrl(const std::string& url)
{
    const UrlParts p = urlParts(url);
    if (p.host.empty())
        return url.substr(0, url.find_first_of("?#"));
    return p.scheme + "://" + p.host + (p.port.empty() ? "" : ":" + p.port) + p.path;
}

Result<HttpResponse> httpPost(const HttpRequest& request, const HttpStreamFn& onStream)
{
    globalInit();
    Transfer t;
    t.request = &request;
    t.onStream = &onStream;
    std::unique_ptr<CURL, void (*)(CURL*)> easy(curl_easy_init(), curl_easy_cleanup);
    std::unique_ptr<CURLM, CURLMcode (*)(CURLM*)> multi(curl_multi_init(), curl_multi_cleanup);
    if (!easy || !multi)
        return Error::failed("send the request to the model", "libcurl could not start a transfer").withKind(kModelUnreachable);
    t.easy = easy.get();
    curl_slist* headers = nullptr;
    for (const auto& h : request.headers)
        headers = curl_slist_append(headers, h.c_str());
    headers = curl_slist_append(headers, "Expect:");   // no 100-continue round trip for large bodies
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> headerList(headers, curl_slist_free_all);
    char errorBuffer[CURL_ERROR_SIZE] = {};

    CURL* e = easy.get();
    setOptions(e, request, headerList.get(), t, errorBuffer);
    curl_multi_add_handle(multi.get(), e);

    const auto idle = std::chrono::duration<double>(std::max(0.05, request.idleTimeoutS));
    t.lastByte = Clock::now();
    int running = 1;
    bool cancelled = false, idleOut = false;
    while (running) {
        if (curl_multi_perform(multi.get(), &running) != CURLM_OK)
            break;
        if (!running)
            break;
        if (request.cancel && request.cancel->load()) {
            cancelled = true;
            break;
        }
        if (Clock::now() - t.lastByte > idle) {
            idleOut = true;
            break;
        }
        curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
        if (request.cancel && request.cancel->load()) {
            cancelled = true;
            break;
        }
    }
    CURLcode code = CURLE_OK;
    bool finished = false;
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == e) {
            code = msg->data.result;
            finished = true;
        }
    }
    curl_multi_remove_handle(multi.get(), e);

    if (t.failed)
        return t.error;
    if (cancelled)
        return Error::failed("send the request to " + displayUrl(request.url), "cancelled while waiting for the model").withKind(kModelCancelled);
    if (idleOut)
        return Error::failed("send the request to " + displayUrl(request.url), "the server at " + hostPort(request.url) + " sent nothing for "
                         + seconds(request.idleTimeoutS) + " s (the idle timeout)", "the model may be overloaded or the prompt very long: try again, or raise the idle timeout").withKind(kModelUnreachable);
    if (!finished)
        return Error::failed("send the request to " + displayUrl(request.url), "libcurl stopped the transfer unexpectedly").withKind(kModelUnreachable);
    if (code != CURLE_OK)
        return curlError(code, request, errorBuffer);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &t.response.status);
    return std::move(t.response);
}

} // namespace kf::synth
