// The model connection (engine/synth/ModelClient.h) against the scripted model server
// (tests/fixtures/model_server.py, a test fixture): both wire formats streamed and as one JSON
// document, what is sent (system prompt, messages, key headers), retries and Retry-After, every
// failure's kind and sentence, the API key kept out of every message, the reply bound, malformed
// streams, cancel from another thread and the idle timeout.
#include "modelserverfixture.h"
#include "testutil.h"

#include "engine/synth/ModelClient.h"

#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

using namespace kf;
using namespace kf::synth;
using nlohmann::json;

Q_DECLARE_METATYPE(kf::synth::Provider)

namespace {

const char* const kKeyVar = "KF_TEST_MODEL_KEY";
const char* const kKey = "sk-kftest-7f3a9c1e5b2d4f60-SECRET";

ModelConfig configFor(const ModelServerFixture& server, Provider provider)
{
    ModelConfig c;
    c.provider = provider;
    c.baseUrl = server.baseUrl(provider) + "/";   // a trailing slash is dropped
    c.model = "test-model";
    c.maxTokens = 321;
    c.temperature = 0.5;
    c.backoffS = 0.01;
    c.maxBackoffS = 0.05;
    c.maxRetries = 2;
    c.idleTimeoutS = 20;
    return c;
}

std::vector<ChatMessage> conversation()
{
    return {{"user", "write a kernel"}, {"assistant", "here it is"}, {"user", "make it faster"}};
}

// A local port nobody listens on: bound to learn its number, then closed (Qt Network is not a
// dependency of the engine's tests).
int closedPort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

double secondsSince(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

class TestModelClient : public QObject {
    Q_OBJECT
private slots:
    void init() { qputenv(kKeyVar, kKey); }
    void providerNames();
    void reply_data();
    void reply();
    void keyHeader_data();
    void keyHeader();
    void retryAfterHonoured();
    void statusErrors_data();
    void statusErrors();
    void keyNeverLeaks_data();
    void keyNeverLeaks();
    void keyVariableUnset();
    void connectionRefused();
    void tooLarge_data();
    void tooLarge();
    void rawStreams_data();
    void rawStreams();
    void cancelWhileStreaming();
    void cancelDuringBackoff();
    void idleTimeout();
};

void TestModelClient::providerNames()
{
    Provider p = Provider::OpenAI;
    QVERIFY(parseProvider("anthropic", p));
    QCOMPARE(p, Provider::Anthropic);
    QVERIFY(parseProvider("openai", p));
    QCOMPARE(p, Provider::OpenAI);
    QVERIFY(!parseProvider("OpenAI", p));
    QVERIFY(!parseProvider("", p));
    QCOMPARE(QString(providerName(Provider::Anthropic)), QString("anthropic"));
    QCOMPARE(QString(providerName(Provider::OpenAI)), QString("openai"));
}

void TestModelClient::reply_data()
{
    QTest::addColumn<Provider>("provider");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<int>("chunks");
    QTest::addColumn<bool>("usage");

    for (Provider p : {Provider::OpenAI, Provider::Anthropic}) {
        const std::string name = providerName(p);
        QTest::newRow((name + " streamed in 5 chunks with usage").c_str()) << p << true << 5 << true;
        QTest::newRow((name + " streamed in 1 chunk without usage").c_str()) << p << true << 1 << false;
        QTest::newRow((name + " one JSON document with usage").c_str()) << p << false << 1 << true;
        QTest::newRow((name + " one JSON document without usage").c_str()) << p << false << 1 << false;
    }
}

void TestModelClient::reply()
{
    QFETCH(Provider, provider);
    QFETCH(bool, stream);
    QFETCH(int, chunks);
    QFETCH(bool, usage);
    const std::string text = "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n";
    json response = {{"text", text}, {"chunks", chunks}, {"stream", stream}};
    if (usage)
        response["usage"] = {{"in", 1234}, {"out", 56}};
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({response}));

    ModelConfig config = configFor(server, provider);
    config.apiKeyEnv = kKeyVar;
    std::vector<std::string> deltas;
    auto r = ModelClient(config).complete("you write CUDA", conversation(),
                                          [&](std::string_view d) { deltas.emplace_back(d); });
    KF_VERIFY_OK(r);
    QCOMPARE(qs(r->text), qs(text));
    QCOMPARE(int(deltas.size()), stream ? chunks : 1);
    std::string joined;
    for (const auto& d : deltas)
        joined += d;
    QCOMPARE(qs(joined), qs(text));
    QCOMPARE(qs(r->model), QString("fixture-model"));
    QCOMPARE(qs(r->stopReason), QString(provider == Provider::OpenAI ? "stop" : "end_turn"));
    QCOMPARE(r->attempts, 1);
    QVERIFY(r->seconds > 0);
    QCOMPARE(r->usageEstimated, !usage);
    if (usage) {
        QCOMPARE(r->tokensIn, 1234LL);
        QCOMPARE(r->tokensOut, 56LL);
    } else {
        QCOMPARE(r->tokensOut, static_cast<long long>(text.size() / 4));
        QVERIFY(r->tokensIn > 0);
    }

    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(1));
    const json& req = requests[0];
    const json& body = req["body"];
    QCOMPARE(qs(req["path"].get<std::string>()),
             QString(provider == Provider::OpenAI ? "/v1/chat/completions" : "/v1/messages"));
    QVERIFY(body["model"] == "test-model");
    QVERIFY(body["max_tokens"] == 321);
    QVERIFY(body["temperature"] == 0.5);
    QVERIFY(body["stream"] == true);
    json expected = json::array();
    if (provider == Provider::OpenAI) {
        expected.push_back({{"role", "system"}, {"content", "you write CUDA"}});
        QVERIFY(body["stream_options"] == json({{"include_usage", true}}));
        QCOMPARE(qs(ModelServerFixture::header(req, "Authorization")), QString("Bearer ") + kKey);
    } else {
        QVERIFY(body["system"] == "you write CUDA");
        QCOMPARE(qs(ModelServerFixture::header(req, "x-api-key")), QString(kKey));
        QCOMPARE(qs(ModelServerFixture::header(req, "anthropic-version")), QString("2023-06-01"));
    }
    for (const auto& m : conversation())
        expected.push_back({{"role", m.role}, {"content", m.content}});
    QVERIFY2(body["messages"] == expected, body["messages"].dump().c_str());
    QVERIFY(ModelServerFixture::header(req, "Content-Type").starts_with("application/json"));
}

void TestModelClient::keyHeader_data()
{
    QTest::addColumn<Provider>("provider");
    QTest::addColumn<bool>("withKey");
    QTest::newRow("openai with key") << Provider::OpenAI << true;
    QTest::newRow("openai without key") << Provider::OpenAI << false;
    QTest::newRow("anthropic with key") << Provider::Anthropic << true;
    QTest::newRow("anthropic without key") << Provider::Anthropic << false;
}

void TestModelClient::keyHeader()
{
    QFETCH(Provider, provider);
    QFETCH(bool, withKey);
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"text", "ok"}}}));
    ModelConfig config = configFor(server, provider);
    config.apiKeyEnv = withKey ? kKeyVar : "";
    KF_VERIFY_OK(ModelClient(config).complete("", {{"user", "hi"}}));
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(1));
    const std::string auth = ModelServerFixture::header(requests[0], "Authorization");
    const std::string xkey = ModelServerFixture::header(requests[0], "x-api-key");
    QCOMPARE(!auth.empty(), withKey && provider == Provider::OpenAI);
    QCOMPARE(!xkey.empty(), withKey && provider == Provider::Anthropic);
    // No system prompt: neither a system message nor a system field.
    const json& body = requests[0]["body"];
    QVERIFY(!body.contains("system"));
    QCOMPARE(body["messages"].size(), size_t(1));
}

void TestModelClient::retryAfterHonoured()
{
    // backoffS is long: only Retry-After: 0 makes the retry quick.
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"status", 429}, {"headers", {{"Retry-After", "0"}}},
                                                {"body", R"({"error":{"message":"slow down"}})"}},
                                               {{"text", "after the wait"}, {"chunks", 2}}}));
    ModelConfig config = configFor(server, Provider::OpenAI);
    config.backoffS = 20;
    config.maxBackoffS = 20;
    const auto start = std::chrono::steady_clock::now();
    auto r = ModelClient(config).complete("s", conversation());
    KF_VERIFY_OK(r);
    QCOMPARE(r->attempts, 2);
    QCOMPARE(qs(r->text), QString("after the wait"));
    QVERIFY(secondsSince(start) < 10);
    QCOMPARE(server.requests().size(), size_t(2));
}

void TestModelClient::statusErrors_data()
{
    QTest::addColumn<Provider>("provider");
    QTest::addColumn<QByteArray>("script");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("says");
    QTest::addColumn<int>("requests");

    const json fail503 = {{"status", 503}, {"body", "busy"}, {"content_type", "text/plain"}};
    const json fail429 = {{"status", 429}, {"body", R"({"error":{"message":"quota"}})"}};
    // maxRetries is 2: three requests, then the error.
    QTest::newRow("503 every time") << Provider::OpenAI << QByteArray::fromStdString(json::array({fail503, fail503, fail503}).dump())
                                    << QString(kModelServer) << "failed (503) 3 times: busy" << 3;
    QTest::newRow("529 every time, anthropic")
        << Provider::Anthropic
        << QByteArray::fromStdString(json::array({{{"status", 529}, {"body", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"}},
                                                  fail503, fail503}).dump())
        << QString(kModelServer) << "503" << 3;
    QTest::newRow("429 every time") << Provider::OpenAI << QByteArray::fromStdString(json::array({fail429, fail429, fail429}).dump())
                                    << QString(kModelRateLimited) << "(429) after 3 attempts: quota" << 3;
    QTest::newRow("503 then success") << Provider::Anthropic
                                      << QByteArray::fromStdString(json::array({fail503, {{"text", "fine"}}}).dump())
                                      << QString() << "fine" << 2;
    QTest::newRow("401") << Provider::OpenAI
                         << QByteArray::fromStdString(json::array({{{"status", 401}, {"body", R"({"error":{"message":"bad key"}})"}}}).dump())
                         << QString(kModelAuth) << "the server refused the API key in $KF_TEST_MODEL_KEY (401): check it" << 1;
    QTest::newRow("403 anthropic") << Provider::Anthropic
                                   << QByteArray::fromStdString(json::array({{{"status", 403}, {"body", "{}"}}}).dump())
                                   << QString(kModelAuth) << "(403)" << 1;
    QTest::newRow("404 names URL and model")
        << Provider::OpenAI << QByteArray::fromStdString(json::array({{{"status", 404}, {"body", "not here"}}}).dump())
        << QString(kModelNotFound) << "/v1/chat/completions or no model test-model (404)" << 1;
    QTest::newRow("400 quotes error.message")
        << Provider::OpenAI
        << QByteArray::fromStdString(json::array({{{"status", 400}, {"body", R"({"error":{"message":"max_tokens is too large"}})"}}}).dump())
        << QString(kModelServer) << "(400): max_tokens is too large" << 1;
    // The reply is quoted up to 300 bytes; the error's sentence then cuts any one word of it
    // past 200 characters, as it does every echo of outside input (engine/core/Echo.h).
    QTest::newRow("422 quotes the first 300 bytes, a long word clipped")
        << Provider::Anthropic
        << QByteArray::fromStdString(json::array({{{"status", 422}, {"body", "plain words " + std::string(400, 'w')}, {"content_type", "text/plain"}}}).dump())
        << QString(kModelServer) << "(422): plain words " + QString(199, 'w') + QString::fromUtf8("… (288 characters) (check") << 1;
}

void TestModelClient::statusErrors()
{
    QFETCH(Provider, provider);
    QFETCH(QByteArray, script);
    QFETCH(QString, kind);
    QFETCH(QString, says);
    QFETCH(int, requests);
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::parse(script.toStdString()));
    ModelConfig config = configFor(server, provider);
    config.apiKeyEnv = kKeyVar;
    auto r = ModelClient(config).complete("s", conversation());
    if (kind.isEmpty()) {
        KF_VERIFY_OK(r);
        QCOMPARE(qs(r->text), says);
        QCOMPARE(r->attempts, requests);
    } else {
        QVERIFY(!r.ok());
        QCOMPARE(qs(r.error().kind), kind);
        QVERIFY2(qs(r.error().message()).contains(says), r.error().message().c_str());
    }
    QCOMPARE(int(server.requests().size()), requests);
}

void TestModelClient::keyNeverLeaks_data()
{
    QTest::addColumn<Provider>("provider");
    QTest::addColumn<QByteArray>("script");
    const std::string echo = std::string(R"({"error":{"message":"key )") + kKey + R"( is not valid"}})";
    auto row = [&](const char* name, Provider p, json script) {
        QTest::newRow(name) << p << QByteArray::fromStdString(script.dump());
    };
    row("401 echoing the key", Provider::OpenAI, json::array({{{"status", 401}, {"body", echo}}}));
    row("403 echoing the key, anthropic", Provider::Anthropic, json::array({{{"status", 403}, {"body", echo}}}));
    row("400 echoing the key", Provider::OpenAI, json::array({{{"status", 400}, {"body", echo}}}));
    row("404 echoing the key", Provider::Anthropic, json::array({{{"status", 404}, {"body", echo}}}));
    row("500 raw body with the key", Provider::OpenAI,
        json::array({{{"status", 500}, {"body", std::string("Authorization: Bearer ") + kKey}, {"content_type", "text/plain"}},
                     {{"status", 500}, {"body", kKey}}, {{"status", 500}, {"body", kKey}}}));
    row("stream error event with the key", Provider::Anthropic,
        json::array({{{"format", "raw"}, {"content_type", "text/event-stream"},
                      {"body", std::string("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"")
                                   + kKey + "\"}}\n\n"}}}));
    row("openai stream error chunk with the key", Provider::OpenAI,
        json::array({{{"format", "raw"}, {"content_type", "text/event-stream"},
                      {"body", std::string("data: {\"error\":{\"message\":\"bad ") + kKey + "\"}}\n\n"}}}));
}

void TestModelClient::keyNeverLeaks()
{
    QFETCH(Provider, provider);
    QFETCH(QByteArray, script);
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::parse(script.toStdString()));
    ModelConfig config = configFor(server, provider);
    config.apiKeyEnv = kKeyVar;
    auto r = ModelClient(config).complete("s", conversation());
    QVERIFY(!r.ok());
    const std::string message = r.error().message() + " " + r.error().what + " " + r.error().hint;
    QVERIFY2(message.find(kKey) == std::string::npos, message.c_str());
    QVERIFY2(message.find("sk-kftest") == std::string::npos, message.c_str());
    // The key did go out, so the server could echo it.
    const auto requests = server.requests();
    QVERIFY(!requests.empty());
    QVERIFY(requests[0].dump().find(kKey) != std::string::npos);
}

void TestModelClient::keyVariableUnset()
{
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"text", "never served"}}}));
    for (const char* value : {"unset", ""}) {
        if (std::string(value) == "unset")
            qunsetenv(kKeyVar);
        else
            qputenv(kKeyVar, "");
        ModelConfig config = configFor(server, Provider::Anthropic);
        config.apiKeyEnv = kKeyVar;
        auto r = ModelClient(config).complete("s", conversation());
        QVERIFY(!r.ok());
        QCOMPARE(qs(r.error().kind), QString(kModelAuth));
        QVERIFY2(qs(r.error().message()).contains("the environment variable KF_TEST_MODEL_KEY that holds the API key is not set"),
                 r.error().message().c_str());
        QVERIFY(!r.error().hint.empty());
    }
    QVERIFY(server.requests().empty());
}

void TestModelClient::connectionRefused()
{
    const int port = closedPort();
    QVERIFY(port > 0);
    ModelConfig config;
    config.baseUrl = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    config.model = "m";
    config.maxRetries = 2;
    config.backoffS = 0.01;
    auto r = ModelClient(config).complete("s", conversation());
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().kind), QString(kModelUnreachable));
    QVERIFY2(qs(r.error().message()).contains(QString("nothing listens at 127.0.0.1:%1: is the server running?").arg(port)),
             r.error().message().c_str());
}

void TestModelClient::tooLarge_data()
{
    QTest::addColumn<Provider>("provider");
    QTest::addColumn<bool>("stream");
    QTest::newRow("openai streamed") << Provider::OpenAI << true;
    QTest::newRow("anthropic streamed") << Provider::Anthropic << true;
    QTest::newRow("openai one document") << Provider::OpenAI << false;
    QTest::newRow("anthropic one document") << Provider::Anthropic << false;
}

void TestModelClient::tooLarge()
{
    QFETCH(Provider, provider);
    QFETCH(bool, stream);
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"text", std::string(8000, 'a')}, {"chunks", 16}, {"stream", stream}}}));
    ModelConfig config = configFor(server, provider);
    config.maxReplyBytes = 2048;
    size_t delivered = 0;
    auto r = ModelClient(config).complete("s", conversation(), [&](std::string_view d) { delivered += d.size(); });
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().kind), QString(kModelTooLarge));
    QVERIFY2(qs(r.error().message()).contains("passed 2 KiB") || qs(r.error().message()).contains("KiB"),
             r.error().message().c_str());
    QVERIFY(delivered <= 2048);
    QCOMPARE(server.requests().size(), size_t(1));
}

void TestModelClient::rawStreams_data()
{
    QTest::addColumn<Provider>("provider");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("contentType");
    QTest::addColumn<QString>("kind");        // "" when it reads
    QTest::addColumn<QString>("expect");      // the text, or a piece of the message

    const QString sse = "text/event-stream";
    QTest::newRow("openai bad JSON chunk") << Provider::OpenAI
                                           << QByteArray("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {not json\n\n")
                                           << sse << QString(kModelMalformed) << "not JSON";
    QTest::newRow("openai content not a string") << Provider::OpenAI
                                                 << QByteArray("data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n")
                                                 << sse << QString(kModelMalformed) << "not a string";
    QTest::newRow("openai ends without text or [DONE]") << Provider::OpenAI
                                                        << QByteArray("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
                                                        << sse << QString(kModelMalformed) << "before any text";
    QTest::newRow("openai text without [DONE] is incomplete")
        << Provider::OpenAI << QByteArray("data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"tial\"}}]}\n\n")
        << sse << QString() << "partial|incomplete";
    QTest::newRow("openai null content and usage-only chunk")
        << Provider::OpenAI
        << QByteArray("data: {\"choices\":[{\"delta\":{\"content\":null}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\n"
                      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
        << sse << QString() << "x|length";
    QTest::newRow("openai SSE without the content type")
        << Provider::OpenAI << QByteArray("data: {\"choices\":[{\"delta\":{\"content\":\"y\"}}]}\n\ndata: [DONE]\n\n")
        << "text/plain" << QString() << "y|";
    QTest::newRow("openai mid-stream error") << Provider::OpenAI << QByteArray("data: {\"error\":{\"message\":\"out of memory\"}}\n\n")
                                             << sse << QString(kModelServer) << "out of memory";
    QTest::newRow("openai body not JSON") << Provider::OpenAI << QByteArray("<html>hello</html>") << "text/html"
                                          << QString(kModelMalformed) << "not JSON";
    QTest::newRow("anthropic overloaded event")
        << Provider::Anthropic
        << QByteArray("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"
                      "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
        << sse << QString(kModelRateLimited) << "(overloaded_error): Overloaded";
    QTest::newRow("anthropic api_error event")
        << Provider::Anthropic << QByteArray("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n")
        << sse << QString(kModelServer) << "boom";
    QTest::newRow("anthropic ends without message_stop or text")
        << Provider::Anthropic << QByteArray("event: ping\ndata: {}\n\n") << sse << QString(kModelMalformed) << "message_stop";
    QTest::newRow("anthropic thinking deltas are not text")
        << Provider::Anthropic
        << QByteArray("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n"
                      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"z\"}}\n\n"
                      "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":9}}\n\n"
                      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
        << sse << QString() << "z|max_tokens";
    QTest::newRow("anthropic bad JSON event") << Provider::Anthropic << QByteArray("event: message_start\ndata: [1,\n\n") << sse
                                              << QString(kModelMalformed) << "not JSON";
}

void TestModelClient::rawStreams()
{
    QFETCH(Provider, provider);
    QFETCH(QByteArray, body);
    QFETCH(QString, contentType);
    QFETCH(QString, kind);
    QFETCH(QString, expect);
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"format", "raw"}, {"content_type", contentType.toStdString()},
                                                {"body", body.toStdString()}}}));
    auto r = ModelClient(configFor(server, provider)).complete("s", conversation());
    if (kind.isEmpty()) {
        KF_VERIFY_OK(r);
        const QStringList parts = expect.split('|');
        QCOMPARE(qs(r->text), parts[0]);
        QCOMPARE(qs(r->stopReason), parts[1]);
    } else {
        QVERIFY(!r.ok());
        QCOMPARE(qs(r.error().kind), kind);
        QVERIFY2(qs(r.error().message()).contains(expect), r.error().message().c_str());
    }
}

void TestModelClient::cancelWhileStreaming()
{
    // The first delta arrives, then the server stalls for 30 s; another thread raises the flag.
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"text", "first second third"}, {"chunks", 3}, {"stall_s", 30}}}));
    std::atomic<bool> cancel{false};
    std::thread raiser;
    std::chrono::steady_clock::time_point raisedAt;
    int deltas = 0;
    auto r = ModelClient(configFor(server, Provider::OpenAI))
                 .complete("s", conversation(),
                           [&](std::string_view) {
                               if (++deltas == 1) {
                                   raisedAt = std::chrono::steady_clock::now();
                                   raiser = std::thread([&cancel] { cancel = true; });
                               }
                           },
                           &cancel);
    if (raiser.joinable())
        raiser.join();
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().kind), QString(kModelCancelled));
    QCOMPARE(deltas, 1);
    QVERIFY2(secondsSince(raisedAt) < 1.0, qPrintable(QString::number(secondsSince(raisedAt))));
}

void TestModelClient::cancelDuringBackoff()
{
    // A 429 asks for a 20 s wait; the flag raised from another thread ends it.
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"status", 429}, {"headers", {{"Retry-After", "20"}}}, {"body", "{}"}}}));
    ModelConfig config = configFor(server, Provider::Anthropic);
    config.maxBackoffS = 30;
    std::atomic<bool> cancel{false};
    std::atomic<bool> started{false};
    const auto start = std::chrono::steady_clock::now();
    std::thread raiser([&] {
        // Raise once the request has been served (the log has it), so the wait is the backoff.
        while (!started.load() && secondsSince(start) < 10) {
            if (!server.requests().empty())
                started = true;
            else
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        cancel = true;
    });
    auto r = ModelClient(config).complete("s", conversation(), {}, &cancel);
    raiser.join();
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().kind), QString(kModelCancelled));
    QVERIFY(secondsSince(start) < 5);
}

void TestModelClient::idleTimeout()
{
    ModelServerFixture server;
    KF_START_MODEL_SERVER(server, json::array({{{"text", "one two"}, {"chunks", 2}, {"stall_s", 10}}}));
    ModelConfig config = configFor(server, Provider::Anthropic);
    config.idleTimeoutS = 1;
    const auto start = std::chrono::steady_clock::now();
    auto r = ModelClient(config).complete("s", conversation());
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().kind), QString(kModelUnreachable));
    QVERIFY2(qs(r.error().message()).contains("sent nothing for 1 s (the idle timeout)"), r.error().message().c_str());
    QVERIFY(secondsSince(start) < 5);
}

QTEST_GUILESS_MAIN(TestModelClient)
#include "tst_modelclient.moc"
