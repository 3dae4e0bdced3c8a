// Kernel synthesis (engine/synth/Synthesis.h) end to end over HTTP: the scripted model server
// (tests/fixtures/model_server.py, a test fixture) plays the model in both wire formats, the real
// ModelClient talks to it, NVRTC compiles every kernel for real, and the runner's verdicts come
// from report files (tests/data/reports) handed back by a scripted `run` hook, since CI has no
// GPU. Covered: a clean run; compile errors and wrong results fed back and fixed; a budget spent
// mid-stage; escalation; Cancel; malformed replies; 429 then success; 401; the interview with a
// question, acceptance and refusal. Every ending keeps its run folder, and the API key never
// reaches a file.
#include "modelserverfixture.h"
#include "reportutil.h"
#include "testutil.h"

#include "engine/core/Files.h"
#include "engine/synth/Synthesis.h"
#include "engine/task/Task.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace kf;
using namespace kf::synth;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kGoodKernel = R"(// c = a + b, one element per thread.
extern "C" __global__ void synth_add(const float* a, const float* b, float* c, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
)";

const char* kBrokenKernel = R"(extern "C" __global__ void synth_add(const float* a, const float* b, float* c, long long n)
{
    long long i = blockIdx.x * blockDim.x + threadIdx.x
    if (i < n) c[i] = a[i] + b[i];
}
)";

const char* kPlan = R"js({"description": "one thread per element", "launches": [{"kernel": "synth_add", "grid": "ceil_div(N, 256)",
 "block": 256, "args": ["a", "b", "c", {"scalar": "N", "type": "int64"}]}]})js";

std::string kernelReply(const std::string& source, const std::string& plan = kPlan)
{
    return "A one-thread-per-element kernel.\n\n```cuda\n" + source + "```\n\n```json\n" + plan + "\n```\n";
}

json openai(const std::string& text, int chunks = 3, json usage = json{{"in", 1000}, {"out", 200}})
{
    return json{{"format", "openai"}, {"text", text}, {"chunks", chunks}, {"usage", usage}};
}

json readJson(const fs::path& p)
{
    auto bytes = readFileBytes(p);
    return bytes ? json::parse(*bytes, nullptr, false) : json();
}

std::string readText(const fs::path& p)
{
    auto bytes = readFileBytes(p);
    return bytes ? *bytes : std::string();
}

std::string allFiles(const fs::path& dir)
{
    std::string all;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
        if (e.is_regular_file())
            all += readText(e.path());
    return all;
}

// The user messages of request i, joined.
std::string userText(const json& request)
{
    std::string out;
    if (request.contains("body") && request["body"].contains("messages"))
        for (const json& m : request["body"]["messages"])
            if (m.value("role", "") == "user" && m["content"].is_string())
                out += m["content"].get<std::string>() + "\n";
    return out;
}

// The runner, scripted: verify answers come from `verdicts` in order ("pass", "fail",
// "error"); bench always answers the softmax report (1.378x). Counts its calls.
struct ScriptedRunner {
    std::vector<std::string> verdicts;
    std::vector<double> speedups;   // per bench, in order; the report's own 1.378 when absent
    int verifies = 0, benches = 0, profiles = 0;
    std::vector<std::string> sources;

    SynthHooks::RunFn hook()
    {
        return [this](RunKind kind, const Task&, const std::string&, const std::string& source, const RunSettings& settings,
                      const CancelToken&) -> Result<protocol::RunReport> {
            const std::string dir = std::string(KF_TEST_DATA_DIR) + "/reports/";
            if (kind == RunKind::Verify) {
                if (settings.shapes != "all" || settings.heldOutCount < 1)
                    return Error::failed("run", "synthesis must verify every shape set with held-out shapes");
                sources.push_back(source);
                const std::string v = verifies < int(verdicts.size()) ? verdicts[size_t(verifies)] : "pass";
                ++verifies;
                return test::report(readJson(dir + "verify_softmax_" + v + ".json"));
            }
            if (kind == RunKind::Profile) {
                ++profiles;
                return test::report(readJson(std::string(KF_TEST_DATA_DIR) + "/profile/h100_softmax_naive.json"));
            }
            json bench = readJson(dir + "bench_softmax_ok.json");
            if (benches < int(speedups.size()))
                bench["geomean_speedup"] = speedups[size_t(benches)];
            ++benches;
            return test::report(bench);
        };
    }
};

} // namespace

class TestSynthesis : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;

    fs::path copyTask()
    {
        static int n = 0;
        const fs::path dir = fs::path(m_tmp.path().toStdString()) / ("task" + std::to_string(++n));
        fs::create_directories(dir);
        json t = readJson(std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add/task.json");
        t["candidates"] = json::array();
        std::ofstream(dir / "task.json") << t.dump(2);
        return dir;
    }

    SynthRequest request(const ModelServerFixture& server, const fs::path& taskDir, Provider p = Provider::OpenAI)
    {
        SynthRequest r;
        r.request = "c = a + b for fp32 vectors";
        r.taskDir = taskDir;
        ModelConfig m;
        m.provider = p;
        m.baseUrl = server.baseUrl(p);
        m.model = "scripted-small";
        m.backoffS = 0.01;
        m.priceInPerMTok = 1;
        m.priceOutPerMTok = 4;
        r.models = {m};
        r.budget.maxAttempts = 3;
        r.budget.perfRounds = 0;
        r.budget.polish = false;
        r.offerGenerated = false;
        return r;
    }

private slots:
    void cleanRunAddsTheCandidate_data()
    {
        QTest::addColumn<int>("provider");
        QTest::addColumn<bool>("polish");
        QTest::newRow("openai") << int(Provider::OpenAI) << false;
        QTest::newRow("anthropic") << int(Provider::Anthropic) << false;
        QTest::newRow("openai, polished") << int(Provider::OpenAI) << true;
    }
    void cleanRunAddsTheCandidate()
    {
        QFETCH(int, provider);
        QFETCH(bool, polish);
        const Provider p = Provider(provider);
        const char* format = p == Provider::OpenAI ? "openai" : "anthropic";
        json script = json::array({json{{"format", format}, {"text", kernelReply(kGoodKernel)}, {"chunks", 4}, {"usage", {{"in", 1200}, {"out", 300}}}}});
        if (polish)
            script.push_back(json{{"format", format}, {"text", kernelReply(std::string("// Tidied.\n") + kGoodKernel)}, {"usage", {{"in", 1500}, {"out", 300}}}});
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, script);
        const fs::path task = copyTask();
        SynthRequest r = request(server, task, p);
        r.budget.polish = polish;
        r.candidateName = "synth-add.cu";
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        std::vector<std::string> stages;
        std::string streamed;
        h.onEvent = [&](const SynthEvent& e) {
            if (e.type == SynthEvent::Type::Stage)
                stages.push_back(e.text);
            if (e.type == SynthEvent::Type::Text)
                streamed += e.text;
        };
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message().c_str());
        QCOMPARE(result->outcome, std::string("candidate"));
        QCOMPARE(result->candidate, std::string("synth-add.cu"));
        QVERIFY(result->speedup && std::abs(*result->speedup - 1.378) < 1e-9);
        QVERIFY2(result->reason.find("1.38x over eager") != std::string::npos, result->reason.c_str());   // rounded, not cut
        QVERIFY(streamed.find("synth_add") != std::string::npos);   // the deltas reached the hook
        QCOMPARE(stages.front(), std::string("codegen"));            // an existing task skips the interview
        auto loaded = loadTask(task);
        QVERIFY(loaded.ok());
        QVERIFY(loaded->findCandidate("synth-add.cu"));
        QVERIFY(fs::exists(task / "synth-add.cu"));
        QCOMPARE(runner.verifies, polish ? 2 : 1);

        const json trace = readJson(result->runDir / "synthesis.json");
        QCOMPARE(trace["outcome"].get<std::string>(), std::string("candidate"));
        QCOMPARE(trace["stages"][0]["status"].get<std::string>(), std::string("skipped"));
        QCOMPARE(trace["stages"][1]["status"].get<std::string>(), std::string("done"));
        QCOMPARE(trace["stages"][4]["status"].get<std::string>(), std::string(polish ? "done" : "skipped"));
        QCOMPARE(trace["totals"]["tokens_in"].get<long long>(), polish ? 2700LL : 1200LL);
        QVERIFY(std::abs(trace["totals"]["usd"].get<double>() - (polish ? (2700 * 1 + 600 * 4) : (1200 + 1200)) / 1e6) < 1e-12);
        QVERIFY(fs::exists(result->runDir / "spec.json"));
        QVERIFY(fs::exists(result->runDir / "request.md"));
        QVERIFY(fs::exists(result->runDir / "01-codegen-prompt.md"));
        QVERIFY(fs::exists(result->runDir / "01-codegen-reply.md"));
        QVERIFY(fs::exists(result->runDir / "01-codegen.cu"));
        QVERIFY(fs::exists(result->runDir / "01-codegen-verify.json"));
        QVERIFY(fs::exists(result->runDir / "01-codegen-bench.json"));
        // The typed reader beside the writer gives the same stages and the kernel.
        auto progress = readSynthProgress(result->runDir);
        QVERIFY2(progress, progress ? "" : progress.error().message().c_str());
        QCOMPARE(int(progress->stages.size()), 5);
        QCOMPARE(progress->stages[1].stage, std::string("codegen"));
        QCOMPARE(progress->stages[1].status, std::string("done"));
        QCOMPARE(progress->kernels.front().file, std::string("01-codegen.cu"));
        QVERIFY(progress->kernels.front().speedup && std::abs(*progress->kernels.front().speedup - 1.378) < 1e-9);

        // What the server got: the agent prompt with the task, and the wire format's headers.
        const std::vector<json> reqs = server.requests();
        QCOMPARE(int(reqs.size()), polish ? 2 : 1);
        QVERIFY(userText(reqs[0]).find("vector_add") != std::string::npos);
        QCOMPARE(reqs[0]["body"]["model"].get<std::string>(), std::string("scripted-small"));
        if (polish)
            QVERIFY(userText(reqs[1]).find("final version") != std::string::npos);
    }

    // A trace that does not read is an Error naming the file and the place, never an empty view.
    void aTraceThatDoesNotReadIsSaid_data()
    {
        QTest::addColumn<QString>("text");   // empty: no file
        QTest::addColumn<QString>("said");
        const QString stage = R"({"stage":"codegen","status":"running","steps":[%1]})";
        const QString trace = R"({"schema_version":1,"kind":"synthesis","stages":[%1]})";
        QTest::newRow("no file") << "" << "synthesis.json";
        QTest::newRow("not JSON") << "{\"stages\": [" << "synthesis.json";
        QTest::newRow("another schema") << R"({"schema_version":2,"kind":"synthesis","stages":[]})" << "at /schema_version: schema_version must be 1";
        QTest::newRow("stages not a list") << R"({"schema_version":1,"kind":"synthesis","stages":{}})" << "at /stages:";
        QTest::newRow("a stage without its status") << trace.arg(R"({"stage":"codegen"})") << "at /stages/0: missing required key \"status\"";
        QTest::newRow("a speedup that is text") << trace.arg(stage.arg(R"({"candidate":"01-codegen.cu","speedup":"fast"})"))
                                                << "at /stages/0/steps/0/speedup:";
    }
    void aTraceThatDoesNotReadIsSaid()
    {
        QFETCH(QString, text);
        QFETCH(QString, said);
        const fs::path dir = fs::path(m_tmp.path().toStdString()) / ("trace-" + std::string(QTest::currentDataTag()));
        fs::create_directories(dir);
        if (!text.isEmpty())
            std::ofstream(dir / "synthesis.json") << text.toStdString();
        auto progress = readSynthProgress(dir);
        QVERIFY(!progress);
        const QString message = QString::fromStdString(progress.error().message());
        QVERIFY2(message.contains(said), qPrintable(message));
        QVERIFY2(message.contains(QString::fromStdString((dir / "synthesis.json").string())), qPrintable(message));
    }

    void compileErrorIsFedBackAndFixed()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({openai(kernelReply(kBrokenKernel)), openai(kernelReply(kGoodKernel))}));
        const fs::path task = copyTask();
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(request(server, task), h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("candidate"));
        const std::vector<json> reqs = server.requests();
        QCOMPARE(int(reqs.size()), 2);
        // The second request carries the broken reply and NVRTC's diagnostic at line 3.
        const std::string second = userText(reqs[1]);
        QVERIFY2(second.find("kernel.cu:3:") != std::string::npos, second.c_str());
        QVERIFY(second.find("did not pass the compile step") != std::string::npos);
        const json trace = readJson(result->runDir / "synthesis.json");
        QCOMPARE(trace["stages"][1]["attempts"].get<int>(), 2);
        QCOMPARE(trace["stages"][1]["steps"][0]["compile"].get<std::string>(), std::string("failed"));
        QCOMPARE(runner.verifies, 1);   // the broken kernel never reached the runner
    }

    void wrongResultIsFedBackAndFixed()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({openai(kernelReply(kGoodKernel)),
                                                   openai(kernelReply(std::string("// fixed\n") + kGoodKernel))}));
        const fs::path task = copyTask();
        ScriptedRunner runner;
        runner.verdicts = {"fail", "pass"};
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(request(server, task), h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("candidate"));
        QCOMPARE(runner.verifies, 2);
        const std::string second = userText(server.requests()[1]);
        QVERIFY2(second.find("verifier rejected it") != std::string::npos, second.c_str());
        QVERIFY(second.find("FAIL") != std::string::npos);
        const json trace = readJson(result->runDir / "synthesis.json");
        QCOMPARE(trace["stages"][1]["status"].get<std::string>(), std::string("done"));          // it compiled
        QCOMPARE(trace["stages"][2]["status"].get<std::string>(), std::string("done"));          // then it passed
        QCOMPARE(trace["stages"][2]["steps"][0]["verify"].get<std::string>(), std::string("pass"));
        // The added file is the second, fixed kernel.
        QVERIFY(readText(task / result->candidate).find("// fixed") != std::string::npos);
    }

    void budgetSpentMidStage()
    {
        ModelServerFixture server;
        // Each reply costs 1e6 tokens in at $1/M: the first spends the $0.5 budget.
        KF_START_MODEL_SERVER(server, json::array({openai(kernelReply(kBrokenKernel), 1, json{{"in", 1000000}, {"out", 10}}),
                                                   openai(kernelReply(kGoodKernel))}));
        SynthRequest r = request(server, copyTask());
        r.budget.maxUsd = 0.5;
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("no_candidate"));
        QCOMPARE(result->failedStage, std::string("codegen"));
        QVERIFY2(result->reason.find("budget") != std::string::npos, result->reason.c_str());
        QCOMPARE(int(server.requests().size()), 1);
        QVERIFY(fs::exists(result->runDir / "01-codegen.cu"));   // kept
    }

    void escalatesAfterFailures()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({openai(kernelReply(kBrokenKernel)), openai(kernelReply(kGoodKernel))}));
        SynthRequest r = request(server, copyTask());
        ModelConfig strong = r.models[0];
        strong.model = "scripted-large";
        r.models.push_back(strong);
        r.budget.escalateAfter = 1;
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("candidate"));
        const std::vector<json> reqs = server.requests();
        QCOMPARE(reqs[0]["body"]["model"].get<std::string>(), std::string("scripted-small"));
        QCOMPARE(reqs[1]["body"]["model"].get<std::string>(), std::string("scripted-large"));
        const json trace = readJson(result->runDir / "synthesis.json");
        QCOMPARE(trace["escalations"][0]["to"].get<std::string>(), std::string("scripted-large"));
    }

    void cancelKeepsTheArtifacts()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({json{{"format", "openai"}, {"text", kernelReply(kGoodKernel)}, {"delay_s", 30}}}));
        SynthRequest r = request(server, copyTask());
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        std::atomic<bool> asked{false};
        h.onEvent = [&](const SynthEvent& e) {
            if (e.type == SynthEvent::Type::Step)
                asked = true;
        };
        CancelToken cancel;
        std::optional<Result<SynthResult>> result;
        std::atomic<bool> finished{false};
        std::thread worker([&] {
            result.emplace(synthesize(r, h, cancel));
            finished = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(asked.load(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(int(server.requests().size()), 1, 10000);   // the request is out, the server waits
        QElapsedTimer clock;
        clock.start();
        cancel.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(finished.load(), 5000);
        worker.join();
        QVERIFY(clock.elapsed() < 5000);
        QVERIFY(result->ok());
        QCOMPARE((*result)->outcome, std::string("cancelled"));
        QVERIFY(fs::exists((*result)->runDir / "01-codegen-prompt.md"));
        QCOMPARE(readJson((*result)->runDir / "synthesis.json")["outcome"].get<std::string>(), std::string("cancelled"));
    }

    void malformedRepliesEndInASentence_data()
    {
        QTest::addColumn<QString>("reply");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no code block") << "I would write a kernel here." << "no ```cuda block";
        QTest::newRow("invalid plan JSON") << QString::fromStdString(kernelReply(kGoodKernel, "{\"launches\": [")) << "not valid JSON";
        QTest::newRow("plan names a missing kernel")
            << QString::fromStdString(kernelReply(kGoodKernel, std::string(kPlan).replace(std::string(kPlan).find("\"synth_add\""), 11, "\"nowhere\"")))
            << "nowhere";
        QTest::newRow("plan with an unknown key")
            << QString::fromStdString(kernelReply(kGoodKernel, std::string(R"({"turbo": true, )") + (kPlan + 1))) << "turbo";
        QTest::newRow("enormous reply") << QString(8192, QLatin1Char('x')) << "KiB";
    }
    void malformedRepliesEndInASentence()
    {
        QFETCH(QString, reply);
        QFETCH(QString, expected);
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({openai(reply.toStdString())}));
        SynthRequest r = request(server, copyTask());
        r.budget.maxAttempts = 1;
        r.models[0].maxReplyBytes = 4096;
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("no_candidate"));
        QCOMPARE(result->failedStage, std::string("codegen"));
        QCOMPARE(runner.verifies, 0);
        const json trace = readJson(result->runDir / "synthesis.json");
        const std::string said = trace["stages"][1].dump();
        QVERIFY2(said.find(expected.toStdString()) != std::string::npos, said.c_str());
        QVERIFY(fs::exists(result->runDir / "01-codegen-prompt.md"));
    }

    void rateLimitThenSuccess()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({json{{"status", 429}, {"headers", {{"Retry-After", "0"}}}, {"body", R"({"error":{"message":"slow down"}})"}},
                                                   openai(kernelReply(kGoodKernel))}));
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(request(server, copyTask()), h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("candidate"));
        const json trace = readJson(result->runDir / "synthesis.json");
        QCOMPARE(trace["stages"][1]["steps"][0]["http_attempts"].get<int>(), 2);
    }

    void unauthorisedEndsTheRunWithoutLeakingTheKey()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({json{{"status", 401}, {"body", R"({"error":{"message":"invalid key sk-synth-SECRET-123"}})"}}}));
        qputenv("KF_TEST_SYNTH_KEY", "sk-synth-SECRET-123");
        SynthRequest r = request(server, copyTask());
        r.models[0].apiKeyEnv = "KF_TEST_SYNTH_KEY";
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        qunsetenv("KF_TEST_SYNTH_KEY");
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("error"));
        QVERIFY2(result->reason.find("401") != std::string::npos, result->reason.c_str());
        QVERIFY(result->reason.find("SECRET") == std::string::npos);
        QVERIFY(allFiles(result->runDir).find("SECRET") == std::string::npos);
        QVERIFY(allFiles(result->runDir).find("KF_TEST_SYNTH_KEY") != std::string::npos);   // the variable's name is recorded
        QCOMPARE(ModelServerFixture::header(server.requests()[0], "Authorization"), std::string("Bearer sk-synth-SECRET-123"));
    }

    void interviewAsksThenProposes_data()
    {
        QTest::addColumn<bool>("accept");
        QTest::newRow("accepted") << true;
        QTest::newRow("refused") << false;
    }
    void interviewAsksThenProposes()
    {
        QFETCH(bool, accept);
        json spec = readJson(std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add/task.json");
        spec["name"] = "synth_add";
        spec["candidates"] = json::array();
        const std::string proposal = "Here is the task.\n\n```json\n" + spec.dump(2) + "\n```\nASSUMPTION: fp32 only\n";
        json script = json::array({openai("QUESTION: which dtype?\nQUESTION: how large is N at most?"),
                                   openai("```json\n{\"schema_version\": 1}\n```\n"),   // refused by the loader, fed back
                                   openai(proposal)});
        if (accept)
            script.push_back(openai(kernelReply(kGoodKernel)));
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, script);
        const fs::path task = fs::path(m_tmp.path().toStdString()) / (accept ? "new-accepted" : "new-refused");
        SynthRequest r = request(server, task);
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        std::vector<std::string> asked;
        h.answer = [&](const std::vector<std::string>& q) {
            asked = q;
            return std::vector<std::string>{"fp32", "2^30"};
        };
        std::vector<std::string> assumptions;
        h.accept = [&](const nlohmann::ordered_json& t, const std::vector<std::string>& a) {
            assumptions = a;
            return accept && t.value("name", std::string()) == "synth_add";
        };
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(asked, (std::vector<std::string>{"which dtype?", "how large is N at most?"}));
        QCOMPARE(assumptions, std::vector<std::string>{"fp32 only"});
        const std::vector<json> reqs = server.requests();
        QVERIFY(userText(reqs[1]).find("A: 2^30") != std::string::npos);
        QVERIFY2(userText(reqs[2]).find("task loader refused it") != std::string::npos, userText(reqs[2]).c_str());
        QVERIFY(userText(reqs[0]).find("## Top level") != std::string::npos);   // the schema doc went along
        if (accept) {
            QCOMPARE(result->outcome, std::string("candidate"));
            auto loaded = loadTask(task);
            QVERIFY(loaded.ok());
            QCOMPARE(loaded->name, std::string("synth_add"));
            QCOMPARE(int(loaded->candidates.size()), 1);
            QCOMPARE(readJson(result->runDir / "synthesis.json")["spec_source"].get<std::string>(), std::string("interview"));
        } else {
            QCOMPARE(result->outcome, std::string("refused"));
            QVERIFY(!fs::exists(task / "task.json"));
            QVERIFY(fs::exists(result->runDir / "03-interview-task.json"));   // the proposal is kept
        }
    }

    void aLateFailureKeepsTheCorrectKernel()
    {
        // Correct at 1.05x (below the threshold), then the server fails every retry in the
        // performance stage: the correct kernel is still added, and the sentence says why it stopped.
        json script = json::array({openai(kernelReply(kGoodKernel))});
        for (int i = 0; i < 4; ++i)
            script.push_back(json{{"status", 503}, {"body", "busy"}});
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, script);
        SynthRequest r = request(server, copyTask());
        r.budget.perfRounds = 2;
        ScriptedRunner runner;
        runner.speedups = {1.05};
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("candidate"));
        QVERIFY2(result->reason.find("stopped early") != std::string::npos, result->reason.c_str());
        QVERIFY(loadTask(r.taskDir)->candidates.size() == 1);
    }

    void performanceSeesWhyTheLastRoundFailed()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({openai(kernelReply(kGoodKernel)), openai(kernelReply(kBrokenKernel)),
                                                   openai("DONE: at the limit")}));
        SynthRequest r = request(server, copyTask());
        r.budget.perfRounds = 3;
        ScriptedRunner runner;
        runner.speedups = {1.02};
        SynthHooks h;
        h.run = runner.hook();
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("candidate"));
        const std::vector<json> reqs = server.requests();
        QCOMPARE(int(reqs.size()), 3);
        QVERIFY(userText(reqs[1]).find("The benchmark follows") != std::string::npos);
        QVERIFY2(userText(reqs[1]).find("profiler's hints") != std::string::npos, userText(reqs[1]).c_str());
        QCOMPARE(runner.profiles, 1);   // the correct kernel; the broken one never ran
        QVERIFY2(userText(reqs[2]).find("kernel.cu:3:") != std::string::npos, userText(reqs[2]).c_str());   // round 1's compile error
        const json trace = readJson(result->runDir / "synthesis.json");
        QVERIFY(trace["stages"][3]["reason"].get<std::string>().find("limit") != std::string::npos);
    }

    void badBytesNeverCrash()
    {
        // Invalid UTF-8 from the user and the model, and a long question cut inside a character:
        // the run ends normally and its trace reads.
        std::string question = "QUESTION: " + std::string(1995, 'q') + "\xc3\xa9\xc3\xa9\xc3\xa9 and \xff\xfe?";
        std::string kernel = std::string("// caf\xe9 \xff\n") + kGoodKernel;
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({json{{"format", "raw"}, {"body", ""}, {"status", 500}}}));
        SynthRequest r = request(server, copyTask());
        r.request = "caf\xe9 \xff";
        r.models[0].maxRetries = 0;
        ScriptedRunner runner;
        SynthHooks h;
        h.run = runner.hook();
        // The model is a hook here: the bytes must reach the engine unchanged, which JSON over HTTP would not allow.
        int call = 0;
        h.model = [&](const ModelCall&, const TextFn& onText, const std::atomic<bool>*) -> Result<ModelReply> {
            ModelReply reply;
            reply.text = call++ == 0 ? kernelReply(kernel) : question;
            onText(reply.text);
            return reply;
        };
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("candidate"));
        const json trace = readJson(result->runDir / "synthesis.json");
        QVERIFY(trace.is_object());
        QCOMPARE(trace["outcome"].get<std::string>(), std::string("candidate"));
    }

    void aBadNameIsRefusedBeforeAnyCall()
    {
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({openai(kernelReply(kGoodKernel))}));
        SynthRequest r = request(server, copyTask());
        r.candidateName = "my kernel.cu";
        SynthHooks h;
        CancelToken cancel;
        auto result = synthesize(r, h, cancel);
        QVERIFY(!result.ok());
        QVERIFY(result.error().why.find("not a plain file name") != std::string::npos);
        QVERIFY(server.requests().empty());
    }

    void changedSpecIsNotWrittenTo()
    {
        // task.json edited while the model works: the kernel stays in the run folder.
        ModelServerFixture server;
        KF_START_MODEL_SERVER(server, json::array({openai(kernelReply(kGoodKernel))}));
        const fs::path task = copyTask();
        ScriptedRunner runner;
        SynthHooks h;
        auto inner = runner.hook();
        h.run = [&](RunKind k, const Task& t, const std::string& f, const std::string& s, const RunSettings& rs, const CancelToken& c) {
            json j = readJson(task / "task.json");
            j["shapes"]["tests"][0]["N"] = 2;
            std::ofstream(task / "task.json") << j.dump(2);
            return inner(k, t, f, s, rs, c);
        };
        CancelToken cancel;
        auto result = synthesize(request(server, task), h, cancel);
        QVERIFY(result.ok());
        QCOMPARE(result->outcome, std::string("error"));
        QVERIFY2(result->reason.find("task.json changed") != std::string::npos, result->reason.c_str());
        QVERIFY(loadTask(task)->candidates.empty());
    }
};

QTEST_GUILESS_MAIN(TestSynthesis)
#include "tst_synthesis.moc"
