// `kforge` as a user and a CI pipeline see it: exit codes, compiler-style diagnostics, --json.
#include "modelserverfixture.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>

namespace {
struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run kforge(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(KF_KFORGE_BIN, args);
    if (!p.waitForFinished(180000))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// kforge with 4 GiB of address space and `seconds` to finish: an unbounded read of /dev/zero
// fails instead of filling the machine, a read that blocks is killed (exit -1).
Run kforgeBounded(const QStringList& args, int seconds)
{
    QProcess p;
    p.setChildProcessModifier([] {
        const rlimit limit{rlim_t(4) << 30, rlim_t(4) << 30};
        ::setrlimit(RLIMIT_AS, &limit);
    });
    p.start(KF_KFORGE_BIN, args);
    if (!p.waitForFinished(seconds * 1000)) {
        p.kill();
        p.waitForFinished();
        return {-1, QString::fromUtf8(p.readAllStandardOutput()), "killed after " + QString::number(seconds) + " s: " +
                                                                      QString::fromUtf8(p.readAllStandardError())};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

const QString kExamples = QString(KF_SOURCE_DIR) + "/resources/examples";

/// A copy of example `name` in `tmp` (its files, not its folders); empty when a copy failed.
QString copyExample(const QTemporaryDir& tmp, const QString& name)
{
    const QString task = tmp.filePath(name);
    if (!QDir().mkpath(task))
        return {};
    for (const QString& f : QDir(kExamples + "/" + name).entryList(QDir::Files))
        if (!QFile::copy(kExamples + "/" + name + "/" + f, task + "/" + f))
            return {};
    return task;
}
} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void compilesAnExample();
    void brokenKernelGivesLocationAndExitCode();
    void jsonOutput();
    void badTaskIsAUsageError();
    void missingNvrtcIsAnEnvironmentError();
    void singleFileOccupancy();
    void usageErrors_data();
    void usageErrors();
    void faultsAreNamedWhereTheyAre_data();
    void faultsAreNamedWhereTheyAre();
    void specialFilesAndLinksAreRefused_data();
    void specialFilesAndLinksAreRefused();
    void generate_data();
    void generate();
    void tune_data();
    void tune();
    void agentVerbs_data();
    void agentVerbs();
    void synth_data();
    void synth();

private:
    QTemporaryDir m_dir;
};

void TestCli::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QFile broken(m_dir.filePath("broken.cu"));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("extern \"C\" __global__ void k(float* x, int n) {\n"
                 "  int i = threadIdx.x;\n"
                 "  if (i < n) x[i] = y + 1.0f;\n"
                 "}\n");
}

void TestCli::compilesAnExample()
{
    Run r = kforge({"compile", kExamples + "/vector_add", "--arch", "sm_90"});
    if (r.exitCode == 3)
        QSKIP(qPrintable("NVRTC unavailable: " + r.err));
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("[sm_90]: compiled in"), qPrintable(r.out));
    QVERIFY2(r.out.contains("registers "), qPrintable(r.out));
    QVERIFY(r.out.contains("spills 0 B stored / 0 B loaded"));
    QVERIFY(r.out.contains("occupancy on sm_90: "));
    QVERIFY(r.out.contains("limited by"));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
}

void TestCli::brokenKernelGivesLocationAndExitCode()
{
    Run r = kforge({"compile", m_dir.filePath("broken.cu"), "--no-cache"});
    if (r.exitCode == 3)
        QSKIP("NVRTC unavailable");
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(m_dir.filePath("broken.cu") + ":3:21: error: identifier \"y\" is undefined"), qPrintable(r.err));
    QVERIFY(r.err.contains("    if (i < n) x[i] = y + 1.0f;\n                      ^"));
    QVERIFY(r.out.contains("1 error(s)"));
}

void TestCli::jsonOutput()
{
    Run r = kforge({"compile", kExamples + "/softmax_fp32", "--arch", "sm_90", "--json"});
    if (r.exitCode == 3)
        QSKIP("NVRTC unavailable");
    QCOMPARE(r.exitCode, 0);
    QJsonParseError pe;
    QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8(), &pe);
    QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
    QJsonObject root = doc.object();
    QCOMPARE(root["schema_version"].toInt(), 1);
    QCOMPARE(root["ok"].toBool(), true);
    QJsonArray builds = root["builds"].toArray();
    QVERIFY(builds.size() >= 2); // naive and optimised
    QJsonObject first = builds[0].toObject();
    QCOMPARE(first["arch"].toString(), QStringLiteral("sm_90"));
    QJsonObject result = first["result"].toObject();
    QCOMPARE(result["success"].toBool(), true);
    QVERIFY(result["kernels"].toArray().size() >= 1);
    QVERIFY(result["kernels"].toArray()[0].toObject().contains("registers"));
    QJsonArray launches = first["launches"].toArray();
    QVERIFY(!launches.isEmpty());
    QJsonObject occ = launches[0].toObject()["occupancy"].toObject();
    QVERIFY(occ["occupancy"].toDouble() > 0.0);
    QVERIFY(!occ["limiter"].toString().isEmpty());
}

void TestCli::badTaskIsAUsageError()
{
    QDir d(m_dir.path());
    d.mkpath("badtask");
    QFile f(d.filePath("badtask/task.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"schema_version": 1, "name": "t", "architectures": ["sm_90"], "symbols": {"N": {}},
                "inputs": [{"name": "x", "dtype": "float32", "shape": ["N"]}]})");
    f.close();
    Run r = kforge({"compile", d.filePath("badtask")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("badtask/task.json: at /inputs/0/dtype: unknown dtype \"float32\"; use one of: fp64"), qPrintable(r.err));
}

void TestCli::missingNvrtcIsAnEnvironmentError()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("KF_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13");
    Run r = kforge({"compile", kExamples + "/vector_add"}, env);
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.err.contains("libnvrtc (the CUDA runtime compiler) could not be loaded"), qPrintable(r.err));
    QVERIFY(r.err.contains("/nonexistent/libnvrtc.so.13"));
    QVERIFY(r.err.contains("KF_NVRTC_LIBRARY"));
}

void TestCli::singleFileOccupancy()
{
    QFile f(m_dir.filePath("regs.cu"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("extern \"C\" __global__ void __launch_bounds__(256) k(const float* x, float* y, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = x[i] * 3.0f;\n}\n");
    f.close();
    Run r = kforge({"compile", m_dir.filePath("regs.cu"), "--arch", "sm_80", "--block-size", "512"});
    if (r.exitCode == 3)
        QSKIP("NVRTC unavailable");
    // 512 exceeds the kernel's launch bounds: the calculator must say so, not invent a number.
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("launch bounds 256"), qPrintable(r.out));
    QVERIFY2(r.out.contains("cannot launch"), qPrintable(r.out));
    QVERIFY(r.out.contains("best theoretical occupancy 100.0% from block size"));
}

void TestCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("needle");
    QTest::newRow("no subcommand") << QStringList{} << "A subcommand is required";
    QTest::newRow("missing path") << QStringList{"compile"} << "path is required";
    QTest::newRow("no such file") << QStringList{"compile", "/nonexistent.cu"} << "no such file or folder";
    QTest::newRow("bad -O") << QStringList{"compile", "x.cu", "-O", "7"} << "-O";
    QTest::newRow("unknown candidate") << QStringList{"compile", kExamples + "/vector_add", "--candidate", "nope.cu"}
                                       << "nope.cu is not a candidate of task vector_add";
    // Issue 19: the compute-sanitizer and endpoint options refuse what cannot work, before a runner starts.
    QTest::newRow("--sanitize with an unknown tool") << QStringList{"verify", kExamples + "/vector_add", "--sanitize=leakcheck"}
                                                      << "\"leakcheck\" is not one of memcheck, racecheck, initcheck, synccheck";
    QTest::newRow("an endpoint runners.json lacks")
        << QStringList{"verify", kExamples + "/vector_add", "--runners",
                       QString(KF_SOURCE_DIR) + "/tests/fixtures/endpoints/runners.json",
                       "--runner-endpoint", "nowhere"}
        << "there is no endpoint \"nowhere\"";
    QTest::newRow("a runners file that does not exist")
        << QStringList{"runners", "list", "--runners", "/nonexistent/runners.json"} << "the file does not exist";
}

void TestCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, needle);
    Run r = kforge(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2((r.err + r.out).contains(needle), qPrintable(r.err + r.out));
}

// Issue 23 section 6: each message names the real cause and place.
void TestCli::faultsAreNamedWhereTheyAre_data()
{
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QStringList>("args");   // "TASK" stands for the prepared task folder
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("needle");     // in stdout + stderr
    QTest::addColumn<QString>("absent");     // must not appear
    QTest::newRow("dangling task.json symlink") << "dangling" << QStringList{"verify", "TASK"} << 2
                                                << "task.json is a symbolic link to" << "no task.json found";
    QTest::newRow("--arch before the file") << "plain" << QStringList{"compile", "--arch", "sm_90", "TASK/naive.cu", "--json"} << 0
                                            << "\"builds\"" << "path is required";
    QTest::newRow("a plan kernel the source lacks") << "missing-kernel" << QStringList{"compile", "TASK", "--candidate", "naive.cu"}
                                                    << 1 << "/candidates/0/launches/0/kernel" << "__nv_name_map";
    QTest::newRow("another candidate's broken plan") << "broken-plan" << QStringList{"compile", "TASK", "--candidate", "optimized.cu"}
                                                     << 0 << "optimized.cu" << "is not an input, output or scratch buffer";
    QTest::newRow("the broken candidate itself") << "broken-plan" << QStringList{"compile", "TASK", "--candidate", "naive.cu"} << 2
                                                 << "/candidates/0/launches/0/args/0" << "";
    QTest::newRow("both broken, the second asked for") << "both-broken" << QStringList{"compile", "TASK", "--candidate", "optimized.cu"}
                                                       << 2 << "/candidates/1/launches/0/args/0" << "/candidates/0/";
}

void TestCli::faultsAreNamedWhereTheyAre()
{
    QFETCH(QString, setup);
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, needle);
    QFETCH(QString, absent);
    QTemporaryDir tmp;
    const QString task = tmp.filePath("vector_add");
    QVERIFY(QDir().mkpath(task));
    for (const QString& f : QDir(kExamples + "/vector_add").entryList(QDir::Files))
        QVERIFY(QFile::copy(kExamples + "/vector_add/" + f, task + "/" + f));
    auto editTask = [&](auto edit) {
        QFile f(task + "/task.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        nlohmann::json j = nlohmann::json::parse(f.readAll().toStdString());
        f.close();
        edit(j);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QByteArray::fromStdString(j.dump(2)));
    };
    if (setup == "dangling") {
        QVERIFY(QFile::remove(task + "/task.json"));
        QVERIFY(QFile::link(tmp.filePath("nowhere.json"), task + "/task.json"));
    } else if (setup == "missing-kernel") {
        editTask([](nlohmann::json& j) { j["candidates"][0]["launches"][0]["kernel"] = "vector_add_missing"; });
    } else if (setup == "broken-plan") {
        editTask([](nlohmann::json& j) { j["candidates"][0]["launches"][0]["args"][0] = "zz"; });
    } else if (setup == "both-broken") {
        editTask([](nlohmann::json& j) {
            j["candidates"][0]["launches"][0]["args"][0] = "zz";
            j["candidates"][1]["launches"][0]["args"][0] = "yy";
        });
    }
    for (QString& a : args)
        a.replace("TASK", task);
    const Run r = kforge(args);
    QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + r.err + r.out.left(2000)));
    QVERIFY2((r.out + r.err).contains(needle), qPrintable(r.err + r.out.left(2000)));
    if (!absent.isEmpty())
        QVERIFY2(!(r.out + r.err).contains(absent), qPrintable(r.err + r.out.left(2000)));
}

void TestCli::specialFilesAndLinksAreRefused_data()
{
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QStringList>("args");   // TASK: the prepared task folder, TMP: the folder around it
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("needle");     // in stdout + stderr
    QTest::newRow("a candidate linking to /dev/zero") << "zero" << QStringList{"compile", "TASK", "--candidate", "naive.cu"} << 2
                                                      << "naive.cu is a symbolic link to /dev/zero, outside the task folder";
    QTest::newRow("a FIFO candidate") << "fifo" << QStringList{"compile", "TASK", "--candidate", "naive.cu"} << 2
                                      << "naive.cu: it is not a regular file but a named pipe (FIFO)";
    QTest::newRow("a candidate linking to a secret") << "secret" << QStringList{"compile", "TASK"} << 2
                                                     << "at /candidates/0/file: naive.cu is a symbolic link to";
    QTest::newRow("a candidate linking to a .cu outside") << "other" << QStringList{"compile", "TASK"} << 2
                                                          << "at /candidates/1/file: optimized.cu is a symbolic link to";
    QTest::newRow("a candidate linking inside the task") << "inside" << QStringList{"compile", "TASK", "--arch", "sm_90"} << 0
                                                         << "naive.cu [sm_90]: compiled in";
    QTest::newRow("a 5 MiB candidate") << "large" << QStringList{"compile", "TASK", "--candidate", "naive.cu"} << 2
                                       << "larger than 4 MiB";
    QTest::newRow("reference.torchscript linking to a secret") << "script" << QStringList{"validate", "TASK"} << 2
                                                               << "at /reference/torchscript: scale_softmax.pt is a symbolic link to";
    QTest::newRow("compile /dev/zero") << "" << QStringList{"compile", "/dev/zero"} << 2
                                       << "/dev/zero: it is not a regular file but a character device";
    QTest::newRow("compile a FIFO") << "" << QStringList{"compile", "TMP/pipe.cu"} << 2 << "not a regular file but a named pipe (FIFO)";
}

void TestCli::specialFilesAndLinksAreRefused()
{
    QFETCH(QString, setup);
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, needle);
    QTemporaryDir tmp;
    const QString secret = "kf-secret-first-line: never printed";
    QFile s(tmp.filePath("secret.txt"));
    QVERIFY(s.open(QIODevice::WriteOnly));
    s.write((secret + "\nmore\n").toUtf8());
    s.close();
    QCOMPARE(::mkfifo(QFile::encodeName(tmp.filePath("pipe.cu")).constData(), 0600), 0);
    const QString example = setup == "script"
                                ? QString(KF_SOURCE_DIR) + "/tests/data/generate/gen_script_scale_softmax_fp32"
                                : kExamples + "/vector_add";
    const QString task = tmp.filePath("task");
    QVERIFY(QDir().mkpath(task + "/src"));
    for (const QString& f : QDir(example).entryList(QDir::Files))
        QVERIFY(QFile::copy(example + "/" + f, task + "/" + f));
    const QString naive = task + "/naive.cu";
    if (setup == "zero") {
        QVERIFY(QFile::remove(naive) && QFile::link("/dev/zero", naive));
    } else if (setup == "fifo") {
        QVERIFY(QFile::remove(naive));
        QCOMPARE(::mkfifo(QFile::encodeName(naive).constData(), 0600), 0);
    } else if (setup == "secret") {
        QVERIFY(QFile::remove(naive) && QFile::link(tmp.filePath("secret.txt"), naive));
    } else if (setup == "other") {
        QVERIFY(QFile::rename(task + "/optimized.cu", tmp.filePath("optimized.cu")));
        QVERIFY(QFile::link(tmp.filePath("optimized.cu"), task + "/optimized.cu"));
    } else if (setup == "inside") {
        QVERIFY(QFile::rename(naive, task + "/src/naive.cu") && QFile::link("src/naive.cu", naive));
    } else if (setup == "large") {
        QFile big(naive);
        QVERIFY(big.open(QIODevice::Append));
        big.write(QByteArray(5 << 20, ' '));
    } else if (setup == "script") {
        QVERIFY(QFile::remove(task + "/scale_softmax.pt") && QFile::link(tmp.filePath("secret.txt"), task + "/scale_softmax.pt"));
    }
    for (QString& a : args)
        a.replace("TASK", task).replace("TMP", tmp.path());
    const Run r = kforgeBounded(args, 60);
    if (exitCode == 0 && r.exitCode == 3)
        QSKIP("NVRTC unavailable");
    const QString all = r.out + r.err;
    QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + all.left(2000)));
    QVERIFY2(all.contains(needle), qPrintable(all.left(2000)));
    QVERIFY2(!all.contains(secret), "the secret file's first line was printed");
}

void TestCli::generate_data()
{
    QTest::addColumn<QString>("example");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("stdoutHas");   // "@golden": stdout is the golden source
    QTest::addColumn<QString>("stderrHas");
    QTest::newRow("dry run prints the golden source") << "softmax_fp32" << QStringList{"--dry-run"} << 0 << "@golden"
                                                      << "dry run, nothing written";
    QTest::newRow("writes the candidate") << "softmax_fp32" << QStringList{} << 0
                                          << "and added it to task.json\n  softmax fused into generated_softmax_fp32" << "";
    QTest::newRow("another name") << "rms_norm_fp16" << QStringList{"--name", "mine"} << 0 << "/mine.cu and added it" << "";
    QTest::newRow("a taken name") << "softmax_fp32" << QStringList{"--name", "optimized.cu"} << 2 << ""
                                  << "a candidate optimized.cu already exists (choose another name with --name)";
    QTest::newRow("unsupported") << "transpose_fp32" << QStringList{} << 2 << ""
                                 << "task.json: at /reference: step 1 (y = transpose(x)) cannot be fused: transpose is not "
                                    "supported (the generator fuses the elementwise ops add";
}

/// `kforge generate` on a copy of an example: the dry run prints exactly the golden source; a
/// real run writes the candidate, after which the task still validates with one candidate more;
/// a taken name and an unsupported reference are usage errors (exit 2) that change nothing.
void TestCli::generate()
{
    QFETCH(QString, example);
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QString, stdoutHas);
    QFETCH(QString, stderrHas);
    QTemporaryDir tmp;
    const QString task = copyExample(tmp, example);
    QVERIFY(!task.isEmpty());
    QFile json(task + "/task.json");
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QByteArray before = json.readAll();
    json.close();
    Run r = kforge(QStringList{"generate", task} + extra);
    QVERIFY2(r.exitCode == exitCode, qPrintable(r.err));
    if (stdoutHas == QStringLiteral("@golden")) {
        QFile golden(QString(KF_TEST_DATA_DIR) + "/generate/examples/" + example + ".cu");
        QVERIFY(golden.open(QIODevice::ReadOnly));
        QCOMPARE(r.out, QString::fromUtf8(golden.readAll()));
    } else {
        QVERIFY2(r.out.contains(stdoutHas), qPrintable(r.out));
    }
    QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    QVERIFY(json.open(QIODevice::ReadOnly));
    const bool changed = json.readAll() != before;
    QCOMPARE(changed, exitCode == 0 && !extra.contains(QStringLiteral("--dry-run")));
    if (changed) {
        Run v = kforge({"validate", task});
        QCOMPARE(v.exitCode, 0);
        QVERIFY2(v.out.contains("3 candidates"), qPrintable(v.out));
    }
}

void TestCli::tune_data()
{
    QTest::addColumn<QString>("example");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("stdoutHas");
    QTest::addColumn<QString>("stderrHas");
    // transpose_fp32's optimized.cu: KF_TILE {32, 64} x KF_ROWS {4, 8, 16}, where TILE % ROWS == 0.
    QTest::newRow("compile only: every point builds")
        << "transpose_fp32" << QStringList{"--compile-only"} << 0 << "6 point(s) of 6 combination(s)" << "";
    QTest::newRow("compile only, json") << "transpose_fp32" << QStringList{"--compile-only", "--json"} << 0
                                        << "\"kind\": \"tune\"" << "";
    QTest::newRow("a candidate without a space") << "vector_add" << QStringList{"--candidate", "naive.cu", "--compile-only"} << 2 << ""
                                                 << "has no \"tune\" block";
    QTest::newRow("a shape the task does not admit") << "vector_add" << QStringList{"--shapes", "M=4"} << 2 << "" << "--shapes";
    QTest::newRow("no GPU: the runner says so") << "vector_add" << QStringList{} << 3 << "" << "GPU";
}

// `kforge tune` without a GPU: its compile stage for real, its refusals, the runner's answer.
void TestCli::tune()
{
    QFETCH(QString, example);
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QString, stdoutHas);
    QFETCH(QString, stderrHas);
    QTemporaryDir tmp;
    const QString task = copyExample(tmp, example);
    QVERIFY(!task.isEmpty());
    Run r = kforge(QStringList{"tune", task} + extra);
    QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + r.err));
    QVERIFY2(r.out.contains(stdoutHas), qPrintable(r.out));
    QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
    QVERIFY(!QFile::exists(task + "/optimized_tuned.cu"));   // nothing is written without a search
}

void TestCli::agentVerbs_data()
{
    QTest::addColumn<QStringList>("args");   // {task}: a copy of vector_add; {tmp}: a folder with agent.cu, plan.json, k.cu
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("has");        // in stdout or stderr
    QTest::newRow("prompt to a file") << QStringList{"prompt", "{task}", "-o", "{tmp}/p.md", "--registry", "{tmp}/reg"} << 0
                                      << "(12 sections,";
    QTest::newRow("prompt as JSON") << QStringList{"prompt", "{task}", "--json", "--registry", "{tmp}/reg"} << 0
                                    << "\"key\": \"forbidden\"";
    QTest::newRow("prompt, named skills") << QStringList{"prompt", "{task}", "--skills", "online-softmax", "--registry", "{tmp}/reg"}
                                          << 0 << "kforge: skills: online-softmax";
    QTest::newRow("prompt, unknown skill") << QStringList{"prompt", "{task}", "--skills", "nope"} << 2
                                           << "no skill is named 'nope'";
    QTest::newRow("prompt, unknown arch") << QStringList{"prompt", "{task}", "--arch", "sm_12"} << 2 << "unknown architecture 'sm_12'";
    QTest::newRow("prompt, bad task") << QStringList{"prompt", "{tmp}"} << 2 << "task.json";
    QTest::newRow("skills") << QStringList{"skills"} << 0 << "online-softmax  [reduction softmax numerics]\n";
    QTest::newRow("skills for a task") << QStringList{"skills", "--task", "{task}"} << 0 << "coalescing-vector-loads  (op add)";
    QTest::newRow("a missing skills folder") << QStringList{"skills", "--skills-dir", "{tmp}/none"} << 0
                                             << "warning: skipped a skill";
    QTest::newRow("candidate add, fenced plan") << QStringList{"candidate", "add", "{task}", "{tmp}/agent.cu", "--no-compile"} << 0
                                                << "added agent.cu to";
    QTest::newRow("candidate add, JSON") << QStringList{"candidate", "add", "{task}", "{tmp}/agent.cu", "--json", "--no-compile"}
                                         << 0 << "\"added\": true";
    QTest::newRow("candidate add, no plan") << QStringList{"candidate", "add", "{task}", "{tmp}/k.cu"} << 2 << "no launch plan";
    QTest::newRow("candidate add, bad plan") << QStringList{"candidate", "add", "{task}", "{tmp}/k.cu", "--plan", "{tmp}/plan.json"}
                                             << 2 << "plan.json: at /launches/0/grid: grid has 1 to 3 dimensions";
    QTest::newRow("candidate add, a scan warning") << QStringList{"candidate", "add", "{task}", "{tmp}/counter.cu", "--no-compile"}
                                                   << 0 << "counter.cu:9:16: warning: [launch-counter]";
}

/// The agent loop's verbs: `kforge prompt`, `kforge skills` and `kforge candidate add`, their
/// exit codes and the lines a user or an agent reads.
void TestCli::agentVerbs()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, has);
    QTemporaryDir tmp;
    const QString task = tmp.filePath("vector_add");
    QVERIFY(QDir().mkpath(task));
    for (const QString& f : QDir(kExamples + "/vector_add").entryList(QDir::Files))
        QVERIFY(QFile::copy(kExamples + "/vector_add/" + f, task + "/" + f));
    const QByteArray kernel = "extern \"C\" __global__ void vadd(const float* a, const float* b, float* c, int n)\n"
                              "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) c[i] = a[i] + b[i];\n}\n";
    const QByteArray plan = R"P({"launches": [{"kernel": "vadd", "grid": "ceil_div(N, 256)", "block": 256, "args": ["a", "b", "c", {"scalar": "N"}]}]})P";
    auto write = [&](const QString& name, const QByteArray& bytes) {
        QFile f(tmp.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    };
    write("k.cu", kernel);
    write("agent.cu", "/*\n```json\n" + plan + "\n```\n*/\n" + kernel);
    write("counter.cu", "/*\n```json\n" + QByteArray(plan).replace("vadd", "vcount") + "\n```\n*/\n__device__ int calls;\n"
                        "extern \"C\" __global__ void vcount(const float* a, const float* b, float* c, int n)\n"
                        "{\n    atomicAdd(&calls, 1);\n}\n");
    write("plan.json", QByteArray(plan).replace("\"ceil_div(N, 256)\"", "[]"));
    QStringList real;
    for (QString a : args)
        real << a.replace("{task}", task).replace("{tmp}", tmp.path());
    Run r = kforge(real);
    QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + r.err + r.out.left(2000)));
    QVERIFY2((r.out + r.err).contains(has), qPrintable(r.err + r.out.left(3000)));
    if (args.first() == "candidate" && exitCode == 0) {
        Run v = kforge({"validate", task});
        QVERIFY2(v.exitCode == 0 && v.out.contains("3 candidates"), qPrintable(v.out + v.err));
    }
}

// `kforge synth` against the scripted model server (tests/fixtures/model_server.py, a test fixture):
// what ends before a GPU is needed, and how it ends. The run on a GPU is gpu.synth.e2e.
void TestCli::synth_data()
{
    QTest::addColumn<QString>("models");       // models.json's text; empty: no file
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("reply");        // the scripted model's one reply; "401": a 401; "down": no server
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("has");
    const QString kernel = "```cuda\nextern \"C\" __global__ void vadd(const float* a, const float* b, float* c, long long n)\n"
                           "{ long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }\n```\n"
                           "```json\n{\"launches\": [{\"kernel\": \"vadd\", \"grid\": \"ceil_div(N, 256)\", \"block\": 256, "
                           "\"args\": [\"a\", \"b\", \"c\", {\"scalar\": \"N\", \"type\": \"int64\"}]}]}\n```\n";
    const QStringList url{"--base-url", "{url}", "--model", "scripted"};
    QTest::newRow("no model anywhere") << "" << QStringList{"synth", "c = a + b", "--task-dir", "{task}"} << "down" << 2
                                       << "no model given";
    QTest::newRow("models.json with a key in it")
        << R"({"schema_version": 1, "models": [{"name": "m", "provider": "openai", "base_url": "http://x/v1", "model": "m", "api_key": "sk-1"}]})"
        << QStringList{"synth", "c = a + b", "--task-dir", "{task}"} << "down" << 2 << "at /models/0/api_key";
    QTest::newRow("unknown model name")
        << R"({"schema_version": 1, "models": [{"name": "m", "provider": "openai", "base_url": "http://x/v1", "model": "m"}]})"
        << QStringList{"synth", "c = a + b", "--task-dir", "{task}", "--model", "other"} << "down" << 2 << "one of: m";
    QTest::newRow("the kernel compiles, then there is no GPU")
        << "" << (QStringList{"synth", "c = a + b", "--task-dir", "{task}", "--json"} + url) << kernel << 3 << "\"outcome\": \"error\"";
    QTest::newRow("401") << "" << (QStringList{"synth", "c = a + b", "--task-dir", "{task}", "--api-key-env", "KF_TEST_KEY"} + url)
                         << "401" << 3 << "(401)";
    QTest::newRow("nothing listens") << "" << (QStringList{"synth", "c = a + b", "--task-dir", "{task}"} + url) << "down" << 3
                                     << "nothing listens";
    QTest::newRow("a new task needs --yes without a terminal")
        << "" << (QStringList{"synth", "c = a + b", "--task-dir", "{tmp}/new"} + url)
        << "```json\n" + QString::fromUtf8(QFile(kExamples + "/vector_add/task.json").exists() ? "" : "") + "{TASK}\n```\n" << 2
        << "pass --yes";
}

void TestCli::synth()
{
    QFETCH(QString, models);
    QFETCH(QStringList, args);
    QFETCH(QString, reply);
    QFETCH(int, exitCode);
    QFETCH(QString, has);
    QTemporaryDir tmp;
    const QString task = tmp.filePath("vector_add");
    QVERIFY(QDir().mkpath(task));
    QFile in(kExamples + "/vector_add/task.json");
    QVERIFY(in.open(QIODevice::ReadOnly));
    nlohmann::json spec = nlohmann::json::parse(in.readAll().toStdString());
    spec["candidates"] = nlohmann::json::array();
    QFile out(task + "/task.json");
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(QByteArray::fromStdString(spec.dump(2)));
    out.close();

    ModelServerFixture server;
    QString url = "http://127.0.0.1:9/v1";   // the discard port: nothing listens there
    if (reply != "down") {
        nlohmann::json script = nlohmann::json::array();
        if (reply == "401")
            script.push_back({{"status", 401}, {"body", R"({"error": {"message": "bad key"}})"}});
        else
            script.push_back({{"format", "openai"},
                              {"text", reply.replace("{TASK}", QString::fromStdString(spec.dump())).toStdString()}});
        KF_START_MODEL_SERVER(server, script);
        url = QString::fromStdString(server.baseUrl(kf::synth::Provider::OpenAI));
    }
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("KF_MODELS_FILE", tmp.filePath("models.json"));
    env.insert("KF_RUNNER_FORCE_CPU", "1");
    env.insert("KF_TEST_KEY", "sk-test-not-a-secret");
    if (!models.isEmpty()) {
        QFile m(tmp.filePath("models.json"));
        QVERIFY(m.open(QIODevice::WriteOnly));
        m.write(models.toUtf8());
    }
    QStringList real;
    for (QString a : args)
        real << a.replace("{task}", task).replace("{tmp}", tmp.path()).replace("{url}", url);
    Run r = kforge(real, env);
    QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + r.err.right(2000) + r.out.left(2000)));
    QVERIFY2((r.out + r.err).contains(has), qPrintable(r.err.right(3000) + r.out.left(3000)));
    QVERIFY(!(r.out + r.err).contains("sk-test-not-a-secret"));
    if (exitCode == 3 && reply.startsWith("```cuda")) {
        // Everything up to the runner is kept: the kernel, its plan, the compile result.
        const QStringList runs = QDir(task + "/.synthesis").entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(runs.size(), 1);
        const QDir run(task + "/.synthesis/" + runs.first());
        QVERIFY(run.exists("01-codegen.cu"));
        QVERIFY(run.exists("01-codegen-compile.json"));
        QVERIFY(run.exists("synthesis.json"));
        QVERIFY(QDir(task).entryList({"synth-*.cu"}).isEmpty());   // the attempt's file was taken away again
    }
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
