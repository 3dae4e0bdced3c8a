// Staging a task's files on a runner that does not share this machine's files (docs/runners.md,
// shared_fs false; docs/runner-protocol.md, "Files"), against the real kforge-runner in CPU mode.
// The runner starts through a command endpoint with shared_fs false, from "/", with a HOME, a
// cache and a TMPDIR of its own. The task (a TorchScript reference, a 5 MiB header, a repro input)
// is a copy in a temporary folder that is moved away after staging: what the runner then reports
// having read (the test hook test_prepared_run parses the request as a verify does and evaluates
// the reference on the CPU) can only come from what was staged.
#include "testutil.h"

#include "engine/core/Files.h"
#include "engine/protocol/FileTransfer.h"
#include "engine/protocol/RunRequest.h"
#include "engine/runner/Endpoint.h"
#include "engine/runner/FileStage.h"
#include "engine/runner/RunSession.h"
#include "engine/runner/Supervisor.h"
#include "engine/task/Task.h"
#include "engine/verify/Npy.h"

#include <QCryptographicHash>
#include <QDir>
#include <QProcess>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace kf;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kRunner = KF_RUNNER_BIN;
const fs::path kScriptTask = std::string(KF_SOURCE_DIR) + "/tests/data/generate/gen_script_scale_softmax_fp32";

QString sha256Of(const fs::path& file)
{
    QFile f(qs(file.string()));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
}

void writeBytes(const fs::path& file, const std::string& bytes)
{
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << bytes;
}

std::string randomBytes(std::size_t n, unsigned seed)
{
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (char& c : s)
        c = static_cast<char>(gen() & 0xff);
    return s;
}

} // namespace

#define REQUIRE_RUNNER()                                                                                    \
    do {                                                                                                    \
        if (!QFileInfo(kRunner).isExecutable())                                                             \
            QSKIP(qPrintable(QString("kforge-runner is not built: %1 does not exist (it needs LibTorch)")     \
                                 .arg(kRunner)));                                                           \
    } while (0)

class TestFileStage : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void taskFilesListsWhatTheRunnerReads();
    void chunksAndContentAddressing();
    void stagesThroughSsh();
    void aVerifyReadsOnlyStagedFiles();
    void aBadHashIsKeptOut();
    void chunksInOrderOnly();
    void confinement_data();
    void confinement();
    void aLinkOutOfTheTaskIsNotSent();
    void tooManyFiles();
    void moreThanFourGiB();
    void aFileNeverStagedIsSaidSo();
    void privateFolderGoesWithTheRunner();

private:
    Endpoint endpoint() const;
    protocol::RunRequest requestFor(const Task& task) const;

    std::unique_ptr<QTemporaryDir> m_root;
    fs::path m_task;          // the client's copy of the task
    fs::path m_runnerCache;   // $XDG_CACHE_HOME of the runner
    fs::path m_runnerTmp;     // $TMPDIR of the runner
    fs::path m_blobs;         // the runner's blob folder
};

Endpoint TestFileStage::endpoint() const
{
    Endpoint e;
    e.name = "staged";
    e.kind = Endpoint::Kind::Command;
    e.command = {"sh", "-c", "cd / && exec \"$0\"", "{runner}"};
    e.runner = kRunner;
    e.sharedFs = false;
    e.env = {{"KF_RUNNER_FORCE_CPU", "1"},
             {"KF_RUNNER_TEST_HOOKS", "1"},
             {"XDG_CACHE_HOME", m_runnerCache.string()},
             {"TMPDIR", m_runnerTmp.string()},
             {"HOME", (m_runnerTmp.parent_path() / "runner-home").string()}};
    return e;
}

void TestFileStage::init()
{
    m_root = std::make_unique<QTemporaryDir>();
    QVERIFY(m_root->isValid());
    const fs::path root = m_root->path().toStdString();
    m_task = root / "client" / "scale_softmax";
    m_runnerCache = root / "runner-cache";
    m_runnerTmp = root / "runner-tmp";
    m_blobs = m_runnerCache / "kernelforge" / "runner-files";
    fs::create_directories(m_runnerTmp);
    fs::create_directories(root / "runner-home");
    fs::create_directories(m_task.parent_path());
    fs::copy(kScriptTask, m_task, fs::copy_options::recursive);
    // Header folders: one file larger than a chunk (4 MiB), one small, and a folder with none.
    writeBytes(m_task / "include" / "big.h", randomBytes((std::size_t(4) << 20) + 3, 1));
    writeBytes(m_task / "include" / "util" / "small.h", "#pragma once\n");
    fs::create_directories(m_task / "headers-none");
    std::ifstream in(m_task / "task.json");
    json j = json::parse(in);
    j["compile"] = {{"include_dirs", {"include", "headers-none"}}};
    std::ofstream(m_task / "task.json") << j.dump(2);
}

void TestFileStage::cleanup()
{
    m_root.reset();
}

protocol::RunRequest TestFileStage::requestFor(const Task& task) const
{
    protocol::RunRequest r;
    r.kind = protocol::RunKind::Verify;
    r.taskJson = taskToJson(task);
    r.taskDir = task.directory.string();
    r.candidateFile = "generated.cu";
    r.cubin = std::string("\x7f" "ELF", 4);   // never loaded: the hook runs no kernel
    r.seeds = {0x5eed};
    r.trials = 1;
    ShapeBinding b;
    b.label = "prime-row";
    b.values = {{"B", 1}, {"D", 7}};
    r.onlyShapes = {b};
    r.setName = "repro";
    return r;
}

void TestFileStage::taskFilesListsWhatTheRunnerReads()
{
    auto task = loadTask(m_task);
    KF_VERIFY_OK(task);
    auto files = taskFilesFor(*task);
    KF_VERIFY_OK(files);
    QStringList paths;
    for (const StageFile& f : *files) {
        paths << qs(f.path);
        QCOMPARE(qs(f.sha256), sha256Of(f.source));
        QCOMPARE(f.size, std::int64_t(fs::file_size(f.source)));
    }
    // The candidate, every header, the TorchScript reference; task.json travels in the request.
    QCOMPARE(paths, QStringList({"generated.cu", "include/big.h", "include/util/small.h", "scale_softmax.pt"}));
    const protocol::FileMap map = fileMap(*files);
    QCOMPARE(int(map.size()), 4);
    QCOMPARE(qs(map.at("include/big.h")), sha256Of(m_task / "include" / "big.h"));
}

void TestFileStage::chunksAndContentAddressing()
{
    REQUIRE_RUNNER();
    auto task = loadTask(m_task);
    KF_VERIFY_OK(task);
    auto files = taskFilesFor(*task);
    KF_VERIFY_OK(files);
    std::int64_t total = 0;
    for (const StageFile& f : *files)
        total += f.size;

    RunnerSupervisor sup(RunnerSupervisor::forEndpoint(endpoint(), kRunner));
    auto hello = sup.hello();
    KF_VERIFY_OK(hello);
    QVERIFY(hello->has("stage"));
    QVERIFY(hello->has("dump_stream"));

    auto first = stage(sup, *files);
    KF_VERIFY_OK(first);
    QCOMPARE(first->files, 4);
    QCOMPARE(first->filesSent, 4);
    QCOMPARE(first->chunksSent, 5);   // big.h is 4 MiB + 3 bytes: two chunks
    QCOMPARE(first->bytesSent, total);
    // Named by content, whole, read-only; no partial upload left behind.
    QStringList names = QDir(qs(m_blobs.string())).entryList(QDir::Files | QDir::Hidden);
    QCOMPARE(names.size(), 4);
    for (const StageFile& f : *files) {
        const fs::path blob = m_blobs / f.sha256;
        QVERIFY2(fs::is_regular_file(fs::symlink_status(blob)), f.path.c_str());
        QCOMPARE(sha256Of(blob), qs(f.sha256));
        QCOMPARE(int(fs::status(blob).permissions() & fs::perms::all), int(fs::perms::owner_read));
    }

    // The runner holds them all: asked again, it is sent nothing.
    auto second = stage(sup, *files);
    KF_VERIFY_OK(second);
    QCOMPARE(second->filesSent, 0);
    QCOMPARE(second->bytesSent, std::int64_t(0));
    // Nor is a new runner on the same host: the cache outlives the process.
    const pid_t before = sup.pid();
    sup.stop();
    auto third = stage(sup, *files);
    KF_VERIFY_OK(third);
    QVERIFY(sup.pid() != before);
    QCOMPARE(third->bytesSent, std::int64_t(0));

    // One new file among them travels alone, in chunks of the size asked for.
    writeBytes(m_task / "include" / "util" / "new.h", randomBytes(10000, 2));
    auto more = taskFilesFor(*loadTask(m_task));
    KF_VERIFY_OK(more);
    auto fourth = stage(sup, *more, nullptr, 4096);
    KF_VERIFY_OK(fourth);
    QCOMPARE(fourth->filesSent, 1);
    QCOMPARE(fourth->chunksSent, 3);
    QCOMPARE(fourth->bytesSent, std::int64_t(10000));
    QCOMPARE(sha256Of(m_blobs / fileMap(*more).at("include/util/new.h")), sha256Of(m_task / "include" / "util" / "new.h"));

    // Cancelled between chunks: nothing more is sent.
    CancelToken cancel;
    cancel.cancel();
    writeBytes(m_task / "include" / "util" / "newer.h", randomBytes(10000, 3));
    auto cancelled = stage(sup, *taskFilesFor(*loadTask(m_task)), &cancel, 4096);
    QVERIFY(!cancelled.ok());
    QVERIFY2(qs(cancelled.error().why).contains("cancelled"), qPrintable(qs(cancelled.error().why)));
}

// Over ssh (tests/fixtures/endpoints/fake-ssh runs the remote words through sh -c as sshd does):
// the environment crosses inside the remote command, and 4 MiB chunks cross as single lines.
void TestFileStage::stagesThroughSsh()
{
    REQUIRE_RUNNER();
    Endpoint e = endpoint();
    e.kind = Endpoint::Kind::Ssh;
    e.host = "gpu-box";
    e.command.clear();
    RunnerSupervisor::Options o = RunnerSupervisor::forEndpoint(e, kRunner);
    o.command.front() = std::string(KF_SOURCE_DIR) + "/tests/fixtures/endpoints/fake-ssh";
    RunnerSupervisor sup(o);
    KF_VERIFY_OK(sup.hello());
    auto files = taskFilesFor(*loadTask(m_task));
    KF_VERIFY_OK(files);
    auto first = stage(sup, *files);
    KF_VERIFY_OK(first);
    QCOMPARE(first->chunksSent, 5);
    for (const StageFile& f : *files)
        QCOMPARE(sha256Of(m_blobs / f.sha256), qs(f.sha256));   // in the cache the ssh-side environment named
    auto second = stage(sup, *files);
    KF_VERIFY_OK(second);
    QCOMPARE(second->bytesSent, std::int64_t(0));
}

void TestFileStage::aVerifyReadsOnlyStagedFiles()
{
    REQUIRE_RUNNER();
    auto task = loadTask(m_task);
    KF_VERIFY_OK(task);
    // A repro's input, with values the reference's result can be checked against.
    const fs::path inputs = m_task.parent_path() / "case-inputs";
    const std::vector<float> x = {-3.5f, 0.25f, 8.0f, 1.0f, -0.75f, 12.5f, 2.0f};
    KF_VERIFY_OK(writeNpy(inputs / "x.npy", DType::F32, {1, 7}, x.data(), x.size() * sizeof(float)));

    RunSession::Options o;
    o.endpoint = endpoint();
    o.runnerPath = kRunner;
    RunSession session(o);
    QVERIFY(session.stagesFiles());
    KF_VERIFY_OK(session.supervisor().hello());
    protocol::RunRequest request = requestFor(*task);
    request.inputsDir = inputs.string();
    auto staged = session.stageRequest(request, *task);
    KF_VERIFY_OK(staged);
    QCOMPARE(staged->filesSent, 5);
    QVERIFY(request.taskDir.empty());
    QVERIFY(request.inputsDir.empty());
    QCOMPARE(int(request.taskFiles.size()), 4);
    QCOMPARE(int(request.inputsFiles.size()), 1);
    QCOMPARE(qs(request.inputsFiles.at("x.npy")), sha256Of(inputs / "x.npy"));
    const json wire = request.toJson();
    QVERIFY(!wire.contains("task_dir") && !wire.contains("inputs_dir"));

    // The client's files go away before the runner reads anything.
    const fs::path client = m_task.parent_path();
    fs::rename(client, client.string() + "-gone");
    QVERIFY(!fs::exists(m_task));

    auto answer = session.supervisor().control({{"type", "test_prepared_run"}, {"request", wire}});
    KF_VERIFY_OK(answer);
    const json& a = answer.value();
    const std::string taskDir = a.at("task_dir").get<std::string>();
    // A folder of the runner's own, in its TMPDIR, and it ran from "/".
    QVERIFY2(taskDir.rfind((m_runnerTmp / "kf-runner-").string(), 0) == 0, taskDir.c_str());
    QCOMPARE(qs(a.at("cwd").get<std::string>()), QString("/"));
    QVERIFY(a.at("inputs_dir").get<std::string>().rfind(m_runnerTmp.string(), 0) == 0);
    QCOMPARE(qs(a.at("candidate").get<std::string>()), QString("generated.cu"));
    // Exactly the staged files, with the staged bytes.
    json expected = json::object();
    for (const auto& [path, sha] : request.taskFiles)
        expected[path] = sha;
    QVERIFY2(a.at("files") == expected, a.at("files").dump().c_str());
    // The TorchScript reference ran on the staged input: softmax(x * 0.125).
    const json& ref = a.at("reference");
    QCOMPARE(ref.at("elements").get<int>(), 7);
    double sum = 0;
    for (float v : x)
        sum += std::exp(0.125 * v);
    for (int i = 0; i < 7; ++i) {
        const double want = std::exp(0.125 * x[std::size_t(i)]) / sum;
        const double got = ref.at("values").at(std::size_t(i)).get<double>();
        QVERIFY2(std::abs(got - want) < 1e-6, qPrintable(QString("element %1: %2, not %3").arg(i).arg(got).arg(want)));
    }
    // The request's folders went when it was answered (the runner takes requests one at a time:
    // once it answers the next one, it has finished the last).
    KF_VERIFY_OK(session.supervisor().control({{"type", "ping"}}));
    QVERIFY2(!fs::exists(taskDir), taskDir.c_str());
}

void TestFileStage::aBadHashIsKeptOut()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(RunnerSupervisor::forEndpoint(endpoint(), kRunner));
    KF_VERIFY_OK(sup.hello());
    const QByteArray sent = "the bytes that were sent";
    const std::string claimed = QCryptographicHash::hash("the bytes that were meant", QCryptographicHash::Sha256).toHex().toStdString();
    protocol::PutFile put;
    put.sha256 = claimed;
    put.size = sent.size();
    put.data = sent.toStdString();
    put.last = true;
    auto r = sup.control(put.toJson());
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().pointer), QString("/sha256"));
    const QString real = QCryptographicHash::hash(sent, QCryptographicHash::Sha256).toHex();
    QVERIFY2(qs(r.error().why).contains("the bytes received have sha256 " + real + ", not " + qs(claimed)), qPrintable(qs(r.error().why)));
    // Nothing kept: the runner still lacks it, and no partial file stays in its cache.
    auto have = sup.control(protocol::HaveFiles{{claimed}}.toJson());
    KF_VERIFY_OK(have);
    QVERIFY(have->at("missing") == json::array({claimed}));
    QCOMPARE(QDir(qs(m_blobs.string())).entryList(QDir::Files | QDir::Hidden).size(), 0);
    KF_VERIFY_OK(sup.control({{"type", "ping"}}));   // a refused file is not a crash
}

void TestFileStage::chunksInOrderOnly()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(RunnerSupervisor::forEndpoint(endpoint(), kRunner));
    KF_VERIFY_OK(sup.hello());
    const std::string bytes = "0123456789";
    const std::string sha = QCryptographicHash::hash(QByteArray::fromStdString(bytes), QCryptographicHash::Sha256).toHex().toStdString();
    auto chunk = [&](std::int64_t offset, std::int64_t n) {
        protocol::PutFile p;
        p.sha256 = sha;
        p.size = 10;
        p.offset = offset;
        p.data = bytes.substr(std::size_t(offset), std::size_t(n));
        p.last = offset + n == 10;
        return p.toJson();
    };
    auto a = sup.control(chunk(0, 4));
    KF_VERIFY_OK(a);
    QVERIFY(a->at("missing") == json::array({sha}));
    auto gap = sup.control(chunk(8, 2));
    QVERIFY(!gap.ok());
    QCOMPARE(qs(gap.error().pointer), QString("/offset"));
    QVERIFY2(qs(gap.error().why).contains("a chunk at offset 8 where 4 bytes had arrived"), qPrintable(qs(gap.error().why)));
    // The upload was dropped: its continuation is refused too, and it starts again from 0.
    auto after = sup.control(chunk(4, 6));
    QVERIFY(!after.ok());
    QVERIFY2(qs(after.error().why).contains("whose first chunk never came"), qPrintable(qs(after.error().why)));
    KF_VERIFY_OK(sup.control(chunk(0, 5)));
    auto done = sup.control(chunk(5, 5));
    KF_VERIFY_OK(done);
    QVERIFY(done->at("missing") == json::array());
    QCOMPARE(sha256Of(m_blobs / sha), qs(sha));
}

void TestFileStage::confinement_data()
{
    QTest::addColumn<QString>("key");          // a task_files key added to a staged request
    QTest::addColumn<bool>("linkBlob");        // instead: the candidate's blob replaced by a link
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("says");
    QTest::newRow("../x") << "../x" << false << "/task_files/..~1x" << "would leave its folder";
    QTest::newRow("include/../../x") << "include/../../x" << false << "/task_files/include~1..~1..~1x" << "would leave its folder";
    QTest::newRow("an absolute path") << "/etc/cron.d/kf" << false << "/task_files/~1etc~1cron.d~1kf" << "an absolute path";
    QTest::newRow("a blob that is a link") << "" << true << "/task_files/generated.cu" << "is not a regular file";
}

void TestFileStage::confinement()
{
    REQUIRE_RUNNER();
    QFETCH(QString, key);
    QFETCH(bool, linkBlob);
    QFETCH(QString, pointer);
    QFETCH(QString, says);
    auto task = loadTask(m_task);
    KF_VERIFY_OK(task);
    RunSession::Options o;
    o.endpoint = endpoint();
    o.runnerPath = kRunner;
    RunSession session(o);
    KF_VERIFY_OK(session.supervisor().hello());
    protocol::RunRequest request = requestFor(*task);
    KF_VERIFY_OK(session.stageRequest(request, *task));
    json wire = request.toJson();
    const std::string candidateSha = request.taskFiles.at("generated.cu");
    const fs::path outside = m_root->filePath("outside.cu").toStdString();
    writeBytes(outside, "planted\n");
    if (linkBlob) {
        // Someone replaced a blob with a link: it is not trusted, and it is reported missing.
        fs::permissions(m_blobs, fs::perms::owner_all);
        fs::remove(m_blobs / candidateSha);
        fs::create_symlink(outside, m_blobs / candidateSha);
        auto have = session.supervisor().control(protocol::HaveFiles{{candidateSha}}.toJson());
        KF_VERIFY_OK(have);
        QVERIFY(have->at("missing") == json::array({candidateSha}));
    } else {
        wire["task_files"][key.toStdString()] = candidateSha;
    }
    auto answer = session.supervisor().control({{"type", "test_prepared_run"}, {"request", wire}});
    QVERIFY2(!answer.ok(), answer ? answer->dump().c_str() : "");
    QCOMPARE(qs(answer.error().pointer), pointer);
    QVERIFY2(qs(answer.error().why).contains(says), qPrintable(qs(answer.error().why)));
    // Nothing was made outside the runner's folder.
    QVERIFY(!fs::exists(m_root->filePath("x").toStdString()));
    QVERIFY(!fs::exists("/etc/cron.d/kf"));
    KF_VERIFY_OK(session.supervisor().control({{"type", "ping"}}));
}

void TestFileStage::aLinkOutOfTheTaskIsNotSent()
{
    const fs::path secret = m_root->filePath("secret.txt").toStdString();
    writeBytes(secret, "not part of the task\n");
    fs::create_symlink(secret, m_task / "include" / "outside.h");
    auto task = loadTask(m_task);
    KF_VERIFY_OK(task);
    auto files = taskFilesFor(*task);
    QVERIFY(!files.ok());
    QVERIFY2(qs(files.error().why).contains("include/outside.h is a link to " + qs(secret.string()) + ", outside the folder"),
             qPrintable(qs(files.error().why)));
    // A link that stays inside the task is sent as the file it names.
    fs::remove(m_task / "include" / "outside.h");
    fs::create_symlink("util/small.h", m_task / "include" / "alias.h");
    files = taskFilesFor(*loadTask(m_task));
    KF_VERIFY_OK(files);
    QCOMPARE(qs(fileMap(*files).at("include/alias.h")), sha256Of(m_task / "include" / "util" / "small.h"));
}

void TestFileStage::tooManyFiles()
{
    REQUIRE_RUNNER();
    // The client refuses a task of more files than a request may name...
    fs::create_directories(m_task / "include" / "many");
    for (int i = 0; i < 4097; ++i)
        std::ofstream(m_task / "include" / "many" / ("h" + std::to_string(i) + ".h")) << i;
    auto files = taskFilesFor(*loadTask(m_task));
    QVERIFY(!files.ok());
    QVERIFY2(qs(files.error().why).contains("more than the 4096 a request may name"), qPrintable(qs(files.error().why)));
    // ...and so does the runner.
    RunnerSupervisor sup(RunnerSupervisor::forEndpoint(endpoint(), kRunner));
    KF_VERIFY_OK(sup.hello());
    json wire = requestFor(*loadTask(kScriptTask)).toJson();
    wire.erase("task_dir");
    json many = json::object();
    for (int i = 0; i < 4097; ++i)
        many["include/h" + std::to_string(i) + ".h"] = std::string(64, 'a');
    wire["task_files"] = many;
    auto answer = sup.control({{"type", "test_prepared_run"}, {"request", wire}});
    QVERIFY(!answer.ok());
    QCOMPARE(qs(answer.error().pointer), QString("/task_files"));
    QVERIFY2(qs(answer.error().why).contains("4097 files, more than the 4096"), qPrintable(qs(answer.error().why)));
}

void TestFileStage::moreThanFourGiB()
{
    REQUIRE_RUNNER();
    auto task = loadTask(m_task);
    KF_VERIFY_OK(task);
    RunSession::Options o;
    o.endpoint = endpoint();
    o.runnerPath = kRunner;
    RunSession session(o);
    KF_VERIFY_OK(session.supervisor().hello());
    protocol::RunRequest request = requestFor(*task);
    KF_VERIFY_OK(session.stageRequest(request, *task));
    // A blob of 4 GiB in the runner's cache (sparse: it costs no disk), named in the request
    // beside the task's files: together they are more than a request may stage.
    const std::string huge(64, 'f');
    fs::permissions(m_blobs, fs::perms::owner_all);
    std::ofstream(m_blobs / huge).close();
    fs::resize_file(m_blobs / huge, std::uintmax_t(4) << 30);
    json wire = request.toJson();
    wire["task_files"]["data/huge.bin"] = huge;
    auto answer = session.supervisor().control({{"type", "test_prepared_run"}, {"request", wire}});
    QVERIFY(!answer.ok());
    QCOMPARE(qs(answer.error().pointer), QString("/task_files"));
    QVERIFY2(qs(answer.error().why).contains("more than the 4 GiB a request may stage"), qPrintable(qs(answer.error().why)));
    // The client never asks for that much: put_file refuses a larger size outright.
    protocol::PutFile put;
    put.sha256 = std::string(64, 'e');
    put.size = (std::int64_t(4) << 30) + 1;
    put.data = "x";
    json line = put.toJson();
    auto refused = session.supervisor().control(line);
    QVERIFY(!refused.ok());
    QCOMPARE(qs(refused.error().pointer), QString("/size"));
}

void TestFileStage::aFileNeverStagedIsSaidSo()
{
    REQUIRE_RUNNER();
    RunnerSupervisor sup(RunnerSupervisor::forEndpoint(endpoint(), kRunner));
    KF_VERIFY_OK(sup.hello());
    json wire = requestFor(*loadTask(kScriptTask)).toJson();
    wire.erase("task_dir");
    wire["task_files"] = {{"generated.cu", std::string(64, '1')}};
    auto answer = sup.control({{"type", "test_prepared_run"}, {"request", wire}});
    QVERIFY(!answer.ok());
    QCOMPARE(qs(answer.error().pointer), QString("/task_files/generated.cu"));
    // The kind a client acts on: stage again and resend (RunSession does, once).
    QCOMPARE(qs(answer.error().kind), QString(protocol::kNotStaged));
    QVERIFY2(qs(answer.error().why).contains("was never sent to this runner"), qPrintable(qs(answer.error().why)));
}

void TestFileStage::privateFolderGoesWithTheRunner()
{
    REQUIRE_RUNNER();
    // A folder left by a runner that was killed (its process is gone) is swept by the next.
    QProcess gone;
    gone.start("true", {});
    QVERIFY(gone.waitForStarted());
    const qint64 deadPid = gone.processId();
    QVERIFY(gone.waitForFinished());
    const fs::path stale = m_runnerTmp / ("kf-runner-" + std::to_string(deadPid) + "-abcdef");
    writeBytes(stale / "task-0" / "naive.cu", "left behind\n");
    const fs::path alive = m_runnerTmp / ("kf-runner-" + std::to_string(::getpid()) + "-abcdef");
    fs::create_directories(alive);   // this process still runs: its folder stays

    auto task = loadTask(m_task);
    KF_VERIFY_OK(task);
    RunnerSupervisor sup(RunnerSupervisor::forEndpoint(endpoint(), kRunner));
    KF_VERIFY_OK(sup.hello());
    auto files = taskFilesFor(*task);
    KF_VERIFY_OK(files);
    KF_VERIFY_OK(stage(sup, *files));
    json wire = requestFor(*task).toJson();
    wire.erase("task_dir");
    wire["task_files"] = fileMap(*files);
    KF_VERIFY_OK(sup.control({{"type", "test_prepared_run"}, {"request", wire}}));
    const QString mine = QString("kf-runner-%1-*").arg(sup.pid());
    QStringList folders = QDir(qs(m_runnerTmp.string())).entryList({"kf-runner-*"}, QDir::Dirs);
    QVERIFY2(!folders.contains(qs(stale.filename().string())), qPrintable(folders.join(", ")));
    QVERIFY(folders.contains(qs(alive.filename().string())));
    QCOMPARE(QDir(qs(m_runnerTmp.string())).entryList({mine}, QDir::Dirs).size(), 1);
    // Its own goes when it ends.
    sup.stop();
    QCOMPARE(QDir(qs(m_runnerTmp.string())).entryList({mine}, QDir::Dirs).size(), 0);
}

QTEST_GUILESS_MAIN(TestFileStage)
#include "tst_filestage.moc"
