// Streamed dumps (docs/runner-protocol.md, "Files"): a runner that does not share this machine's
// files sends the case folders of failing trials as file_chunk events, and DumpReceiver writes
// them under the client's dump folder. Rows feed DumpReceiver directly (reassembly, order, paths
// that would leave the folder, links, the budget), then go through the real kforge-runner in CPU
// mode: its test hook test_dump_stream streams files as a dump is streamed, and test_send sends a
// chunk a misbehaving runner could, which the supervisor must refuse.
#include "testutil.h"

#include "engine/protocol/FileTransfer.h"
#include "engine/runner/DumpReceiver.h"
#include "engine/runner/Supervisor.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>

using namespace kf;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kRunner = KF_RUNNER_BIN;

protocol::FileChunk chunk(const std::string& path, std::int64_t offset, std::int64_t size, std::string data)
{
    protocol::FileChunk c;
    c.id = 1;
    c.path = path;
    c.offset = offset;
    c.size = size;
    c.data = std::move(data);
    c.last = offset + static_cast<std::int64_t>(c.data.size()) == size;
    return c;
}

// Byte j of a file the runner's test hook writes.
std::string pattern(std::size_t n)
{
    std::string s(n, '\0');
    for (std::size_t j = 0; j < n; ++j)
        s[j] = static_cast<char>(j % 251);
    return s;
}

std::string contents(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Everything under `dir`, links included, as relative paths.
QStringList listing(const fs::path& dir)
{
    QStringList out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        out << QString::fromStdString(fs::relative(it->path(), dir).generic_string());
    out.sort();
    return out;
}

} // namespace

#define REQUIRE_RUNNER()                                                                                    \
    do {                                                                                                    \
        if (!QFileInfo(kRunner).isExecutable())                                                             \
            QSKIP(qPrintable(QString("kforge-runner is not built: %1 does not exist (it needs LibTorch)")     \
                                 .arg(kRunner)));                                                           \
    } while (0)

class TestDumpStream : public QObject {
    Q_OBJECT
private slots:
    void init();
    void reassemblesFiles();
    void aBadOffsetIsRefused_data();
    void aBadOffsetIsRefused();
    void pathsStayInside_data();
    void pathsStayInside();
    void linksAreNotFollowed_data();
    void linksAreNotFollowed();
    void theBudgetHolds();
    void anUnfinishedFileIsNotKept();
    void theRunnerStreamsAFolder();
    void aRefusedChunkRestartsTheRunner();
    void aChunkNobodyAskedForIsAProtocolError();

private:
    std::unique_ptr<QTemporaryDir> m_root;
    fs::path m_dump;      // the client's dump folder
    fs::path m_outside;   // beside it: nothing may appear here
};

void TestDumpStream::init()
{
    m_root = std::make_unique<QTemporaryDir>();
    QVERIFY(m_root->isValid());
    m_dump = fs::path(m_root->path().toStdString()) / "dumps" / "run";
    m_outside = fs::path(m_root->path().toStdString()) / "outside";
    fs::create_directories(m_outside);
}

void TestDumpStream::reassemblesFiles()
{
    DumpReceiver r(m_dump, 1 << 20);
    const std::string a = pattern(10), b = pattern(7);
    // Two files, their chunks interleaved, one of them empty.
    KF_VERIFY_OK(r.accept(chunk("03-tail-N4099-t0/inputs/a.npy", 0, 10, a.substr(0, 4))));
    KF_VERIFY_OK(r.accept(chunk("03-tail-N4099-t0/actual/c.npy", 0, 7, b.substr(0, 3))));
    // Not there until its last chunk: a case folder never holds half a tensor.
    QVERIFY(!fs::exists(m_dump / "03-tail-N4099-t0/inputs/a.npy"));
    KF_VERIFY_OK(r.accept(chunk("03-tail-N4099-t0/inputs/a.npy", 4, 10, a.substr(4))));
    KF_VERIFY_OK(r.accept(chunk("03-tail-N4099-t0/actual/c.npy", 3, 7, b.substr(3))));
    KF_VERIFY_OK(r.accept(chunk("03-tail-N4099-t0/case.json", 0, 0, "")));
    KF_VERIFY_OK(r.finish());
    QCOMPARE(r.filesWritten(), 3);
    QCOMPARE(r.bytes(), std::int64_t(17));
    QVERIFY(contents(m_dump / "03-tail-N4099-t0/inputs/a.npy") == a);
    QVERIFY(contents(m_dump / "03-tail-N4099-t0/actual/c.npy") == b);
    QVERIFY(fs::is_regular_file(m_dump / "03-tail-N4099-t0/case.json"));
    // No temporary left beside them.
    QCOMPARE(listing(m_dump), QStringList({"03-tail-N4099-t0", "03-tail-N4099-t0/actual", "03-tail-N4099-t0/actual/c.npy",
                                           "03-tail-N4099-t0/case.json", "03-tail-N4099-t0/inputs",
                                           "03-tail-N4099-t0/inputs/a.npy"}));
    // A file sent twice is refused.
    auto again = r.accept(chunk("03-tail-N4099-t0/case.json", 0, 0, ""));
    QVERIFY(!again.ok());
    QVERIFY2(qs(again.error().why).contains("sent twice"), qPrintable(qs(again.error().why)));
}

void TestDumpStream::aBadOffsetIsRefused_data()
{
    QTest::addColumn<qint64>("firstOffset");   // -1: the first chunk is fine, the second is at `second`
    QTest::addColumn<qint64>("second");
    QTest::addColumn<QString>("says");
    QTest::newRow("a first chunk not at 0") << qint64(4) << qint64(0) << "its first chunk is at offset 4, not 0";
    QTest::newRow("a gap") << qint64(-1) << qint64(6) << "a chunk at offset 6 where 4 bytes had arrived";
    QTest::newRow("a chunk sent again") << qint64(-1) << qint64(0) << "a chunk at offset 0 where 4 bytes had arrived";
}

void TestDumpStream::aBadOffsetIsRefused()
{
    QFETCH(qint64, firstOffset);
    QFETCH(qint64, second);
    QFETCH(QString, says);
    DumpReceiver r(m_dump, 1 << 20);
    const std::string a = pattern(10);
    Result<void> refused;
    if (firstOffset >= 0) {
        refused = r.accept(chunk("case/a.npy", firstOffset, 10, a.substr(std::size_t(firstOffset), 2)));
    } else {
        KF_VERIFY_OK(r.accept(chunk("case/a.npy", 0, 10, a.substr(0, 4))));
        refused = r.accept(chunk("case/a.npy", second, 10, a.substr(std::size_t(second), 2)));
    }
    QVERIFY(!refused.ok());
    QCOMPARE(qs(refused.error().pointer), QString("/offset"));
    QVERIFY2(qs(refused.error().why).contains(says), qPrintable(qs(refused.error().why)));
    // Nothing of the file is kept, not even its temporary.
    QVERIFY(!fs::exists(m_dump / "case" / "a.npy"));
    QStringList left = listing(m_dump);
    left.removeAll("case");
    QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
    KF_VERIFY_OK(r.finish());
}

void TestDumpStream::pathsStayInside_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("says");
    QTest::newRow("../outside/x") << "../outside/x" << "would leave its folder";
    QTest::newRow("case/../../../outside/x") << "case/../../../outside/x" << "would leave its folder";
    QTest::newRow("an absolute path") << "" << "an absolute path";   // the outside folder's own path
    QTest::newRow("an empty component") << "case//x" << "empty component";
}

void TestDumpStream::pathsStayInside()
{
    QFETCH(QString, path);
    QFETCH(QString, says);
    const std::string p = path.isEmpty() ? (m_outside / "x").string() : path.toStdString();
    DumpReceiver r(m_dump, 1 << 20);
    auto refused = r.accept(chunk(p, 0, 3, "abc"));
    QVERIFY(!refused.ok());
    QCOMPARE(qs(refused.error().pointer), QString("/path"));
    QVERIFY2(qs(refused.error().why).contains(says), qPrintable(qs(refused.error().why)));
    QVERIFY(listing(m_outside).isEmpty());
    QVERIFY(!fs::exists(m_dump));
}

void TestDumpStream::linksAreNotFollowed_data()
{
    QTest::addColumn<QString>("link");      // made inside the dump folder, pointing at the outside folder
    QTest::addColumn<QString>("path");
    QTest::newRow("a folder on the way") << "case" << "case/inputs/a.npy";
    QTest::newRow("a deeper folder") << "case/inputs" << "case/inputs/a.npy";
    QTest::newRow("the file itself") << "case/inputs/a.npy" << "case/inputs/a.npy";
}

void TestDumpStream::linksAreNotFollowed()
{
    QFETCH(QString, link);
    QFETCH(QString, path);
    const fs::path at = m_dump / link.toStdString();
    fs::create_directories(at.parent_path());
    fs::create_symlink(link.endsWith(".npy") ? m_outside / "a.npy" : m_outside, at);
    DumpReceiver r(m_dump, 1 << 20);
    auto refused = r.accept(chunk(path.toStdString(), 0, 3, "abc"));
    QVERIFY(!refused.ok());
    QCOMPARE(qs(refused.error().pointer), QString("/path"));
    QVERIFY2(qs(refused.error().why).contains(qs(at.string()) + " is a symbolic link"), qPrintable(qs(refused.error().why)));
    QVERIFY2(listing(m_outside).isEmpty(), qPrintable(listing(m_outside).join(", ")));
}

void TestDumpStream::theBudgetHolds()
{
    DumpReceiver r(m_dump, 16);
    // A file larger than the budget is refused at its first chunk, before a byte is written.
    auto big = r.accept(chunk("case/big.npy", 0, 17, "x"));
    QVERIFY(!big.ok());
    QCOMPARE(qs(big.error().pointer), QString("/size"));
    QVERIFY2(qs(big.error().why).contains("the dump would need 17 bytes, more than its budget of 16 bytes (max_bytes)"), qPrintable(qs(big.error().why)));
    // Files that fit one by one but not together: the one that would cross the budget is refused.
    KF_VERIFY_OK(r.accept(chunk("case/a.npy", 0, 10, pattern(10))));
    auto second = r.accept(chunk("case/b.npy", 0, 7, pattern(7)));
    QVERIFY(!second.ok());
    QCOMPARE(qs(second.error().pointer), QString("/size"));
    QCOMPARE(r.bytes(), std::int64_t(10));
    QVERIFY(!fs::exists(m_dump / "case" / "b.npy"));
    KF_VERIFY_OK(r.accept(chunk("case/c.npy", 0, 6, pattern(6))));   // exactly the budget
    QCOMPARE(r.bytes(), std::int64_t(16));
}

void TestDumpStream::anUnfinishedFileIsNotKept()
{
    {
        DumpReceiver r(m_dump, 1 << 20);
        KF_VERIFY_OK(r.accept(chunk("case/a.npy", 0, 10, pattern(4))));
        auto f = r.finish();
        QVERIFY(!f.ok());
        QVERIFY2(qs(f.error().why).contains("after 4 of its 10 bytes"), qPrintable(qs(f.error().why)));
    }
    {
        DumpReceiver r(m_dump, 1 << 20);
        KF_VERIFY_OK(r.accept(chunk("case/b.npy", 0, 10, pattern(4))));
    }   // dropped without finish(): its temporary goes with it
    QCOMPARE(listing(m_dump), QStringList({"case"}));
}

void TestDumpStream::theRunnerStreamsAFolder()
{
    REQUIRE_RUNNER();
    RunnerSupervisor::Options o;
    o.runnerPath = kRunner;
    o.extraEnv = {"KF_RUNNER_FORCE_CPU=1", "KF_RUNNER_TEST_HOOKS=1", "TMPDIR=" + m_outside.string()};
    RunnerSupervisor sup(o);
    auto hello = sup.hello();
    KF_VERIFY_OK(hello);
    QVERIFY(hello->has("dump_stream"));
    const std::int64_t big = (std::int64_t(4) << 20) * 2 + 5;   // three chunks
    DumpReceiver receiver(m_dump, std::int64_t(64) << 20);
    int chunks = 0;
    auto report = sup.control({{"type", "test_dump_stream"},
                               {"files", {{"01-one-N1-t0/case.json", 40}, {"01-one-N1-t0/inputs/x.npy", big}, {"empty", 0}}}},
                              {}, nullptr, [&](const protocol::FileChunk& c) {
                                  ++chunks;
                                  return receiver.accept(c);
                              });
    KF_VERIFY_OK(report);
    KF_VERIFY_OK(receiver.finish());
    QCOMPARE(report->at("bytes").get<std::int64_t>(), big + 40);
    QCOMPARE(chunks, 5);
    QCOMPARE(receiver.filesWritten(), 3);
    QVERIFY(contents(m_dump / "01-one-N1-t0/case.json") == pattern(40));
    QVERIFY(contents(m_dump / "01-one-N1-t0/inputs/x.npy") == pattern(std::size_t(big)));
    QVERIFY(fs::is_regular_file(m_dump / "empty") && fs::file_size(m_dump / "empty") == 0);
    // The runner's own copy went once it was sent (only its private folder stays, empty of dumps);
    // it has finished with the request once it answers the next.
    KF_VERIFY_OK(sup.control({{"type", "ping"}}));
    for (const QString& entry : listing(m_outside))
        QVERIFY2(!entry.contains("dump-"), qPrintable(entry));
}

void TestDumpStream::aRefusedChunkRestartsTheRunner()
{
    REQUIRE_RUNNER();
    RunnerSupervisor::Options o;
    o.runnerPath = kRunner;
    o.extraEnv = {"KF_RUNNER_FORCE_CPU=1", "KF_RUNNER_TEST_HOOKS=1"};
    RunnerSupervisor sup(o);
    KF_VERIFY_OK(sup.hello());
    const pid_t first = sup.pid();
    // A chunk whose path leaves the dump folder gets past no reader: the supervisor refuses the
    // line as malformed. One the reader accepts but the receiver refuses (its budget) ends the
    // request with the receiver's reason.
    DumpReceiver receiver(m_dump, 4);
    auto sink = [&](const protocol::FileChunk& c) { return receiver.accept(c); };
    const json overBudget = chunk("case/a.npy", 0, 5, "abcde").toJson();
    auto r = sup.control({{"type", "test_send"}, {"messages", json::array({overBudget})}}, {}, nullptr, sink);
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.error().why).startsWith("the runner sent a dump file the client refused (case/a.npy: the dump would need 5 bytes, "
                                          "more than its budget of 4 bytes (max_bytes)); it was restarted."),
             qPrintable(qs(r.error().why)));
    QVERIFY(!fs::exists(m_dump / "case" / "a.npy"));
    json escape = chunk("case/x", 0, 3, "abc").toJson();
    escape["path"] = "../outside/x";
    r = sup.control({{"type", "test_send"}, {"messages", json::array({escape})}}, {}, nullptr, sink);
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.error().why).contains("the runner sent a malformed message (the path has a \"..\" component, which would leave "
                                        "its folder at /path)"),
             qPrintable(qs(r.error().why)));
    QVERIFY(listing(m_outside).isEmpty());
    // A fresh runner answers the next request.
    KF_VERIFY_OK(sup.control({{"type", "ping"}}));
    QVERIFY(sup.pid() != first);
}

void TestDumpStream::aChunkNobodyAskedForIsAProtocolError()
{
    REQUIRE_RUNNER();
    RunnerSupervisor::Options o;
    o.runnerPath = kRunner;
    o.extraEnv = {"KF_RUNNER_FORCE_CPU=1", "KF_RUNNER_TEST_HOOKS=1"};
    RunnerSupervisor sup(o);
    KF_VERIFY_OK(sup.hello());
    auto r = sup.control({{"type", "test_send"}, {"messages", json::array({chunk("case/a.npy", 0, 3, "abc").toJson()})}});
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.error().why).contains("a file_chunk for a request that streams no files"), qPrintable(qs(r.error().why)));
    QVERIFY(!fs::exists(m_dump));
}

QTEST_GUILESS_MAIN(TestDumpStream)
#include "tst_dumpstream.moc"
