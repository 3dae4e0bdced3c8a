// The run policy (RunSettings) and the requests built from it: what a GPU run receives must not
// depend on which front end started it.
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/runner/RunSettings.h"
#include "testutil.h"

#include <QDir>
#include <QTest>

#include <set>

using namespace kf;
using nlohmann::json;

namespace {

// Applies a row's settings, written as JSON: {"only_shapes": [{"label": "t", "N": 7}],
// "set_name": "repro", "first_trial": 2, "samples": 25, "dump_dir": "d", "dump_max_bytes": 9,
// "dump_all_failing": true, "inputs_dir": "i"}.
RunSettings settingsFrom(const QString& text)
{
    RunSettings s;
    const json j = json::parse(text.toStdString());
    if (j.contains("only_shapes"))
        for (const json& b : j["only_shapes"]) {
            ShapeBinding sb;
            for (auto it = b.begin(); it != b.end(); ++it)
                if (it.key() == "label")
                    sb.label = it->get<std::string>();
                else
                    sb.values[it.key()] = it->get<std::int64_t>();
            s.onlyShapes.push_back(sb);
        }
    s.setName = j.value("set_name", s.setName);
    s.firstTrial = j.value("first_trial", s.firstTrial);
    s.samples = j.value("samples", s.samples);
    s.dumpDir = j.value("dump_dir", s.dumpDir);
    s.dumpMaxBytes = j.value("dump_max_bytes", s.dumpMaxBytes);
    s.dumpAllFailing = j.value("dump_all_failing", s.dumpAllFailing);
    s.inputsDir = j.value("inputs_dir", s.inputsDir);
    return s;
}

// vector_add's first candidate as a build leaves it: the request only copies the cubin and the
// lowered names, so no NVRTC is needed.
struct Built {
    Task task;
    CompileRequest request;
    CompileResult result;
    const Candidate& candidate() const { return task.candidates.front(); }
};

Built vectorAdd()
{
    auto task = loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add");
    if (!task)
        qFatal("%s", task.error().message().c_str());
    auto req = compileRequestFor(*task, task->candidates.front(), "sm_90");
    if (!req)
        qFatal("%s", req.error().message().c_str());
    Built b{std::move(task.value()), std::move(req.value()), {}};
    b.result.cubin = std::string("\x7f" "ELF", 4);
    b.result.loweredNames = {{"vector_add", "_Z10vector_addPKfS0_Pfi"}};
    return b;
}

// "$CWD" in a row's expected text stands for the absolute working folder.
json withCwd(const QString& text)
{
    QString t = text;
    return json::parse(t.replace("$CWD", QDir::currentPath()).toStdString());
}

} // namespace

class TestRunSettings : public QObject {
    Q_OBJECT
private slots:
    void helloArch_data()
    {
        QTest::addColumn<QString>("hello");
        QTest::addColumn<QString>("arch");
        QTest::newRow("runner names the arch") << R"({"device":{"arch":"sm_90"}})" << "sm_90";
        QTest::newRow("compute capability") << R"({"device":{"compute_capability":"8.6"}})" << "sm_86";
        QTest::newRow("no device (no GPU)") << R"({"device_error":"no CUDA device"})" << "";
    }
    void helloArch()
    {
        QFETCH(QString, hello);
        QFETCH(QString, arch);
        json j = json::parse(hello.toStdString());
        j["type"] = "hello";
        auto h = protocol::Hello::fromJson(j);
        KF_VERIFY_OK(h);
        QCOMPARE(qs(h->arch()), arch);
    }

    void seeds_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qulonglong>("value");
        QTest::newRow("0x prefix") << "0x9f3a" << true << 0x9f3aull;
        QTest::newRow("upper case") << "9F3A" << true << 0x9f3aull;
        QTest::newRow("64-bit") << "0xffffffffffffffff" << true << ~0ull;
        QTest::newRow("17 digits") << "0x1ffffffffffffffff" << false << 0ull;
        QTest::newRow("not hex") << "0xzz" << false << 0ull;
        QTest::newRow("empty") << "" << false << 0ull;
    }
    void seeds()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qulonglong, value);
        auto v = protocol::parseSeed(text.toStdString());
        QCOMPARE(v.has_value(), valid);
        if (valid) {
            QCOMPARE(qulonglong(*v), value);
            QCOMPARE(protocol::parseSeed(protocol::seedText(*v)), v);
        }
    }

    void fixedSeedsReplayConsecutively()
    {
        auto s = freshSeeds(3, 0x10ull);
        QCOMPARE(s, (std::vector<std::uint64_t>{0x10, 0x11, 0x12}));
        auto fresh = freshSeeds(8, std::nullopt);
        QCOMPARE(std::set<std::uint64_t>(fresh.begin(), fresh.end()).size(), size_t(8));
    }

    void requestFields_data()
    {
        QTest::addColumn<bool>("bench");
        QTest::newRow("verify") << false;
        QTest::newRow("bench") << true;
    }
    void requestFields()
    {
        QFETCH(bool, bench);
        const Built b = vectorAdd();
        const Candidate& c = b.candidate();
        const CompileResult& r = b.result;
        RunSettings s;
        s.trials = 4;
        s.seed = 0x100;
        const TaskPayload payload = taskPayload(b.task);
        json j = buildRunRequest(bench ? RunKind::Bench : RunKind::Verify, payload, c, b.request, r, "13.0", s).toJson();
        QCOMPARE(qs(j["type"].get<std::string>()), bench ? QString("bench") : QString("verify"));
        QCOMPARE(qs(j["task_hash"].get<std::string>()), qs(payload.hash));
        QCOMPARE(qs(j["cubin"].get<std::string>()), QString("f0VMRg=="));
        QCOMPARE(j["seeds"].size(), size_t(bench ? 1 : 4));
        QCOMPARE(j["trials"].get<int>(), bench ? 1 : 4);
        QCOMPARE(j.contains("time_cap_ms"), bench);
        QCOMPARE(j["lowered_names"]["vector_add"].get<std::string>(), std::string("_Z10vector_addPKfS0_Pfi"));
        // The same task and candidate give the same hashes every time: promotion compares them.
        QCOMPARE(taskPayload(b.task).hash, payload.hash);
        QCOMPARE(candidateRef(c, b.request, r).sourceHash, j["source_hash"].get<std::string>());
    }
    void optionalVerifyFields_data()
    {
        QTest::addColumn<bool>("bench");
        QTest::addColumn<QString>("settings");
        QTest::addColumn<QString>("emitted");  // exactly these optional fields, with these values
        QTest::newRow("defaults emit none") << false << "{}" << "{}";
        QTest::newRow("only_shapes with set_name")
            << false << R"({"only_shapes": [{"label": "tail", "N": 4099}, {"N": 7}], "set_name": "repro"})"
            << R"({"only_shapes": [{"label": "tail", "N": 4099}, {"N": 7}], "set_name": "repro"})";
        QTest::newRow("set_name alone is not sent") << false << R"({"set_name": "shrink"})" << "{}";
        QTest::newRow("first_trial") << false << R"({"first_trial": 2})" << R"({"first_trial": 2})";
        QTest::newRow("samples") << false << R"({"samples": 25})" << R"({"samples": 25})";
        QTest::newRow("dump, first failing, default budget")
            << false << R"({"dump_dir": "/tmp/kf-cases/./run/../run1"})"
            << R"({"dump": {"dir": "/tmp/kf-cases/run1", "max_bytes": 2147483648, "trials": "first_failing"}})";
        QTest::newRow("dump, all failing, relative dir made absolute")
            << false << R"({"dump_dir": "cases", "dump_max_bytes": 1000, "dump_all_failing": true})"
            << R"({"dump": {"dir": "$CWD/cases", "max_bytes": 1000, "trials": "all_failing"}})";
        QTest::newRow("inputs_dir made absolute")
            << false << R"({"inputs_dir": "case/inputs", "only_shapes": [{"N": 5}]})"
            << R"({"inputs_dir": "$CWD/case/inputs", "only_shapes": [{"N": 5}], "set_name": "custom"})";
        QTest::newRow("bench sends no verify-only field")
            << true
            << R"({"only_shapes": [{"N": 5}], "first_trial": 2, "samples": 3, "dump_dir": "/tmp/d", "inputs_dir": "/tmp/i"})"
            << "{}";
    }
    void optionalVerifyFields()
    {
        QFETCH(bool, bench);
        QFETCH(QString, settings);
        QFETCH(QString, emitted);
        const Built b = vectorAdd();
        const Candidate& c = b.candidate();
        const CompileResult& r = b.result;
        const json want = withCwd(emitted);
        const json j = buildRunRequest(bench ? RunKind::Bench : RunKind::Verify, taskPayload(b.task), c, b.request, r, "13.0",
                                       settingsFrom(settings))
                           .toJson();
        for (const char* key : {"only_shapes", "set_name", "first_trial", "samples", "dump", "inputs_dir"}) {
            QVERIFY2(j.contains(key) == want.contains(key),
                     qPrintable(QString("%1 is %2sent").arg(key, j.contains(key) ? "" : "not ")));
            if (want.contains(key))
                QVERIFY2(j[key] == want[key], qPrintable(QString("%1: got %2, want %3")
                                                             .arg(key, qs(j[key].dump()), qs(want[key].dump()))));
        }
        if (j.contains("dump"))
            QVERIFY(QDir::isAbsolutePath(qs(j["dump"]["dir"].get<std::string>())));
    }

    // A profile sends one shape, one seed and whether to profile the baseline; nothing of
    // verify's dump or bench's sampling.
    void profileRequest_data()
    {
        QTest::addColumn<QString>("settings");
        QTest::addColumn<bool>("baseline");
        QTest::addColumn<QString>("setName");
        QTest::newRow("the largest benchmark shape, with the baseline")
            << R"({"only_shapes": [{"label": "big", "N": 16777216}], "set_name": "benchmarks"})" << true << "benchmarks";
        QTest::newRow("a custom shape, candidate only") << R"({"only_shapes": [{"N": 4099}]})" << false << "custom";
    }
    void profileRequest()
    {
        QFETCH(QString, settings);
        QFETCH(bool, baseline);
        QFETCH(QString, setName);
        const Built b = vectorAdd();
        const Candidate& c = b.candidate();
        const CompileResult& r = b.result;
        RunSettings s = settingsFrom(settings);
        s.trials = 5;               // verify's trials do not leak into a profile
        s.dumpDir = "/tmp/cases";   // nor does its dump
        s.profileBaseline = baseline;
        const json j = buildRunRequest(RunKind::Profile, taskPayload(b.task), c, b.request, r, "13.0", s).toJson();
        QCOMPARE(qs(j["type"].get<std::string>()), QString("profile"));
        QCOMPARE(j["seeds"].size(), size_t(1));
        QCOMPARE(j["trials"].get<int>(), 1);
        QCOMPARE(j["only_shapes"].size(), size_t(1));
        QVERIFY2(j["only_shapes"][0] == json::parse(settings.toStdString())["only_shapes"][0], j["only_shapes"].dump().c_str());
        QCOMPARE(qs(j["set_name"].get<std::string>()), setName);
        QCOMPARE(j["profile"]["baseline"].get<bool>(), baseline);
        for (const char* key : {"dump", "time_cap_ms", "held_out_shapes", "inputs_dir"})
            QVERIFY2(!j.contains(key), key);
    }

    void defaultProfileShape_data()
    {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("label");
        // The benchmark shape with the most elements, wherever it is listed; test shapes only
        // when a task has no benchmarks.
        QTest::newRow("vector_add: 256M, listed second") << "vector_add" << "256M";
        QTest::newRow("softmax: equal sizes, the first listed") << "softmax_fp32" << "8k-rows-of-4k";
    }
    void defaultProfileShape()
    {
        QFETCH(QString, task);
        QFETCH(QString, label);
        auto t = loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/" + task.toStdString());
        KF_VERIFY_OK(t);
        auto shape = kf::defaultProfileShape(*t);
        QVERIFY(shape.has_value());
        QCOMPARE(qs(shape->label), label);
        for (const auto& b : t->benchmarkShapes)
            QVERIFY(t->totalElements(b) <= t->totalElements(*shape));
        t->benchmarkShapes.clear();
        auto fromTests = kf::defaultProfileShape(*t);
        QVERIFY(fromTests.has_value());
        for (const auto& b : t->testShapes)
            QVERIFY(t->totalElements(b) <= t->totalElements(*fromTests));
        t->testShapes.clear();
        QVERIFY(!kf::defaultProfileShape(*t).has_value());
    }

    // compute-sanitizer's shapes: the smallest test shape, and the smallest ragged one (some size
    // not a multiple of 32) when that is another shape.
    void sanitizeShapes_data()
    {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("tests");      // the test shapes, JSON
        QTest::addColumn<QString>("expected");   // describe() of each chosen shape, joined with "; "
        QTest::newRow("smallest is ragged: one shape") << "vector_add" << R"([{"N": 4096}, {"N": 97}, {"N": 1000003}])" << "N=97";
        QTest::newRow("smallest is whole: the smallest ragged one too")
            << "vector_add" << R"([{"N": 1048576}, {"N": 64}, {"N": 4099}, {"N": 100003}])" << "N=64; N=4099";
        QTest::newRow("nothing ragged") << "vector_add" << R"([{"N": 256}, {"N": 32}])" << "N=32";
        QTest::newRow("no test shapes: nothing") << "vector_add" << "[]" << "";
    }
    void sanitizeShapes()
    {
        QFETCH(QString, task);
        QFETCH(QString, tests);
        QFETCH(QString, expected);
        auto t = loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/" + task.toStdString());
        KF_VERIFY_OK(t);
        t->testShapes.clear();
        for (const json& b : json::parse(tests.toStdString())) {
            ShapeBinding sb;
            for (auto it = b.begin(); it != b.end(); ++it)
                sb.values[it.key()] = it->get<std::int64_t>();
            t->testShapes.push_back(sb);
        }
        QStringList got;
        for (const ShapeBinding& b : kf::sanitizeShapes(*t))
            got << qs(b.describe());
        QCOMPARE(got.join("; "), expected);
    }

    // --sanitize reaches the request (verify only), with the resolved shapes; the runner must list
    // the feature.
    void sanitizeRequest()
    {
        Built b = vectorAdd();
        RunSettings s;
        s.sanitizeTools = {"memcheck", "racecheck"};
        KF_VERIFY_OK(resolveSettings(RunKind::Verify, b.task, s));
        QVERIFY(!s.sanitizeShapes.empty());
        const protocol::RunRequest r = buildRunRequest(RunKind::Verify, taskPayload(b.task), b.candidate(), b.request, b.result, "13.0", s);
        QVERIFY(r.sanitize.has_value());
        QCOMPARE(int(r.sanitize->tools.size()), 2);
        QCOMPARE(qs(r.missingFeature({"heartbeat"})), QString("sanitize"));
        QCOMPARE(qs(r.missingFeature({"sanitize"})), QString(""));
        auto back = protocol::RunRequest::fromJson(r.toJson());
        KF_VERIFY_OK(back);
        QVERIFY(back->sanitize.has_value());
        QVERIFY(back->sanitize->tools == r.sanitize->tools);
        QCOMPARE(int(back->sanitize->shapes.size()), int(r.sanitize->shapes.size()));
        const protocol::RunRequest bench = buildRunRequest(RunKind::Bench, taskPayload(b.task), b.candidate(), b.request, b.result, "13.0", s);
        QVERIFY(!bench.sanitize.has_value());
    }

    void sanitizeRequestRefusals_data()
    {
        QTest::addColumn<QString>("field");     // the request's "sanitize" (or "placement") value
        QTest::addColumn<QString>("pointer");
        QTest::newRow("an unknown tool") << R"({"sanitize": {"tools": ["leakcheck"]}})" << "/sanitize/tools/0";
        QTest::newRow("tools empty") << R"({"sanitize": {"tools": []}})" << "/sanitize/tools";
        QTest::newRow("timeout too short") << R"({"sanitize": {"timeout_ms": 10}})" << "/sanitize/timeout_ms";
        QTest::newRow("an unknown key") << R"({"sanitize": {"tool": "memcheck"}})" << "/sanitize/tool";
        QTest::newRow("attempt 0") << R"({"placement": {"endpoint": "box", "attempt": 0}})" << "/placement/attempt";
    }
    void sanitizeRequestRefusals()
    {
        QFETCH(QString, field);
        QFETCH(QString, pointer);
        const Built b = vectorAdd();
        json j = buildRunRequest(RunKind::Verify, taskPayload(b.task), b.candidate(), b.request, b.result, "13.0", RunSettings{}).toJson();
        j.update(json::parse(field.toStdString()));
        auto r = protocol::RunRequest::fromJson(j);
        QVERIFY(!r);
        QCOMPARE(qs(r.error().pointer), pointer);
    }

    // Protocol 3's hello: where the runner runs. Two hellos with one host and one UUID share a GPU.
    void helloPlacement()
    {
        const json j = json::parse(R"({"type": "hello", "device": {"gpu": "NVIDIA H100 80GB HBM3", "arch": "sm_90",
            "uuid": "GPU-ac7d9fee-f3cd-a5ae-df83-585fd377babc", "pci_bus_id": "0000:18:00.0"},
            "features": [], "versions": {}, "host": "gpu-box", "visible_devices": "1", "runner_build": "0.1.0",
            "signing_key_id": "3f4c9a0b1e2d7c65", "sanitizer": {"path": "/usr/local/cuda/bin/compute-sanitizer", "version": "2025.3.1.0"}})");
        auto h = protocol::Hello::fromJson(j);
        KF_VERIFY_OK(h);
        QCOMPARE(qs(h->gpuKey()), QString("gpu-box/GPU-ac7d9fee-f3cd-a5ae-df83-585fd377babc"));
        QCOMPARE(qs(h->visibleDevices), QString("1"));
        QVERIFY(h->sanitizer.has_value());
        QCOMPARE(qs(h->sanitizer->version), QString("2025.3.1.0"));
        auto again = protocol::Hello::fromJson(h->toJson());
        KF_VERIFY_OK(again);
        QCOMPARE(qs(again->gpuKey()), qs(h->gpuKey()));
        QCOMPARE(qs(again->signingKeyId), QString("3f4c9a0b1e2d7c65"));
        // A protocol-2 style hello without a UUID still gets a key, from what it has.
        json old = j;
        old["device"].erase("uuid");
        old["device"].erase("pci_bus_id");
        old.erase("sanitizer");
        auto o = protocol::Hello::fromJson(old);
        KF_VERIFY_OK(o);
        QCOMPARE(qs(o->gpuKey()), QString("gpu-box/visible:1#0"));
        QVERIFY(!o->sanitizer.has_value());
    }

    void helloHas_data()
    {
        QTest::addColumn<QString>("hello");
        QTest::addColumn<QString>("feature");
        QTest::addColumn<bool>("has");
        QTest::newRow("listed") << R"({"features": ["only_shapes", "dump", "inputs_dir"]})" << "dump" << true;
        QTest::newRow("not listed") << R"({"features": ["only_shapes", "inputs_dir"]})" << "dump" << false;
        QTest::newRow("prefix of a listed name") << R"({"features": ["dump_all"]})" << "dump" << false;
        QTest::newRow("empty list") << R"({"features": []})" << "dump" << false;
        QTest::newRow("no features (older runner)") << R"({"type": "hello"})" << "dump" << false;
        // A malformed hello is refused as a whole: nothing it lists is believed.
        QTest::newRow("features is a string") << R"({"features": "dump"})" << "dump" << false;
        QTest::newRow("features is an object") << R"({"features": {"dump": true}})" << "dump" << false;
        QTest::newRow("hello is not an object") << R"(["dump"])" << "dump" << false;
        QTest::newRow("hello is null") << "null" << "dump" << false;
        QTest::newRow("non-string entries refuse the hello") << R"({"features": [1, null, "dump"]})" << "dump" << false;
    }
    void helloHas()
    {
        QFETCH(QString, hello);
        QFETCH(QString, feature);
        QFETCH(bool, has);
        json j = json::parse(hello.toStdString());
        if (j.is_object())
            j["type"] = "hello";
        auto h = protocol::Hello::fromJson(j);
        QCOMPARE(h && h->has(feature.toStdString()), has);
    }

    void missingFeature_data()
    {
        QTest::addColumn<QString>("features");  // the hello's list
        QTest::addColumn<QString>("settings");
        QTest::addColumn<QString>("missing");
        const QString all = R"(["only_shapes", "first_trial", "samples", "dump", "inputs_dir"])";
        QTest::newRow("defaults need nothing, even from an old runner") << "[]" << "{}" << "";
        QTest::newRow("dump needed, not offered") << R"(["only_shapes"])" << R"({"dump_dir": "/tmp/d"})" << "dump";
        QTest::newRow("dump needed and offered") << R"(["dump"])" << R"({"dump_dir": "/tmp/d"})" << "";
        QTest::newRow("first missing of several is named")
            << R"(["dump"])" << R"({"only_shapes": [{"N": 1}], "dump_dir": "/tmp/d", "inputs_dir": "/tmp/i"})"
            << "only_shapes";
        QTest::newRow("samples before dump") << R"(["first_trial"])" << R"({"first_trial": 1, "samples": 3, "dump_dir": "/d"})"
                                             << "samples";
        QTest::newRow("inputs_dir last") << R"(["only_shapes", "first_trial", "samples", "dump"])"
                                         << R"({"only_shapes": [{"N": 1}], "inputs_dir": "/tmp/i"})" << "inputs_dir";
        QTest::newRow("everything needed, everything offered")
            << all << R"({"only_shapes": [{"N": 1}], "first_trial": 1, "samples": 3, "dump_dir": "/d", "inputs_dir": "/i"})"
            << "";
    }
    void missingFeature()
    {
        QFETCH(QString, features);
        QFETCH(QString, settings);
        QFETCH(QString, missing);
        const Built b = vectorAdd();
        const protocol::RunRequest r =
            buildRunRequest(RunKind::Verify, taskPayload(b.task), b.candidate(), b.request, b.result, "13.0", settingsFrom(settings));
        QCOMPARE(qs(r.missingFeature(json::parse(features.toStdString()).get<std::vector<std::string>>())), missing);
    }
};

QTEST_GUILESS_MAIN(TestRunSettings)
#include "tst_runsettings.moc"
