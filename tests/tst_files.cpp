// The one bounded reader (engine/core/Files.h) and the task-file rule (engine/task/TaskFiles.h):
// special files are refused before a byte is read, without blocking and with bounded memory; a
// file of a task lies inside the task folder once links are followed, and a refused file's bytes
// never reach a message.
#include "engine/core/Files.h"
#include "engine/task/Task.h"
#include "engine/task/TaskFiles.h"
#include "engine/task/TaskHash.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kf;
namespace fs = std::filesystem;

namespace {

const char* kSecretLine = "kf-secret-first-line: do not print me";

void writeBytes(const fs::path& p, const std::string& bytes)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
}

long peakRssKiB()
{
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

// Runs `read` on a thread. A read that blocks (what a FIFO did to the old reader) is released by
// opening the FIFO for writing and reported as nullopt, so the suite fails instead of hanging.
template <class F>
std::optional<std::invoke_result_t<F>> withinTenSeconds(F read, const fs::path& fifo)
{
    auto done = std::async(std::launch::async, read);
    if (done.wait_for(std::chrono::seconds(10)) == std::future_status::ready)
        return done.get();
    if (const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC); fd >= 0)
        ::close(fd);
    done.wait();
    return std::nullopt;
}

void copyFolder(const fs::path& from, const fs::path& to)
{
    fs::create_directories(to);
    fs::copy(from, to, fs::copy_options::recursive);
}

} // namespace

class TestFiles : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void specialFilesAreRefusedUnread_data();
    void specialFilesAreRefusedUnread();
    void taskFilesStayInsideTheTask_data();
    void taskFilesStayInsideTheTask();
    void aTaskThatLinksOutDoesNotLoad_data();
    void aTaskThatLinksOutDoesNotLoad();
    void theTaskHashNeverReadsOutside();

private:
    QTemporaryDir m_tmp;
    fs::path m_root, m_task, m_outside;
};

void TestFiles::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_root = m_tmp.path().toStdString();
    m_task = m_root / "task";
    m_outside = m_root / "outside";
    writeBytes(m_outside / "secret.txt", std::string(kSecretLine) + "\nsecond line\n");
    writeBytes(m_outside / "other.cu", "__global__ void other() {}\n");
    writeBytes(m_task / "k.cu", "__global__ void k() {}\n");
    fs::create_symlink("k.cu", m_task / "alias.cu");
    fs::create_symlink(m_outside / "secret.txt", m_task / "leak.cu");
    fs::create_symlink(m_outside / "other.cu", m_task / "borrowed.cu");
    fs::create_symlink(m_outside, m_task / "linked");
    fs::create_symlink("/dev/zero", m_task / "zero.cu");
    QCOMPARE(::mkfifo((m_task / "pipe.cu").c_str(), 0600), 0);
    fs::create_symlink("pipe.cu", m_task / "pipe-link.cu");
    writeBytes(m_root / "ten.txt", "0123456789");
    writeBytes(m_root / "eleven.txt", "0123456789A");
    writeBytes(m_root / "empty.txt", "");
}

void TestFiles::specialFilesAreRefusedUnread_data()
{
    QTest::addColumn<QString>("path");      // relative to the temporary folder unless absolute
    QTest::addColumn<qint64>("maxBytes");   // -1: the default
    QTest::addColumn<QString>("says");      // empty: read
    QTest::newRow("/dev/zero") << "/dev/zero" << qint64(-1) << "not a regular file but a character device";
    QTest::newRow("a link to /dev/zero") << "task/zero.cu" << qint64(-1) << "not a regular file but a character device";
    QTest::newRow("a FIFO") << "task/pipe.cu" << qint64(-1) << "not a regular file but a named pipe (FIFO)";
    QTest::newRow("a link to a FIFO") << "task/pipe-link.cu" << qint64(-1) << "named pipe (FIFO)";
    QTest::newRow("a folder") << "outside" << qint64(-1) << "not a regular file but a folder";
    QTest::newRow("missing") << "nowhere.txt" << qint64(-1) << "cannot open the file: No such file or directory";
    QTest::newRow("one byte over the limit") << "eleven.txt" << qint64(10) << "larger than 10 bytes";
    QTest::newRow("exactly the limit") << "ten.txt" << qint64(10) << "";
    QTest::newRow("an empty file") << "empty.txt" << qint64(10) << "";
    QTest::newRow("a /proc file (size 0 on stat)") << "/proc/self/status" << qint64(-1) << "";
    QTest::newRow("a /proc file over the limit") << "/proc/self/status" << qint64(16) << "larger than 16 bytes";
}

void TestFiles::specialFilesAreRefusedUnread()
{
    QFETCH(QString, path);
    QFETCH(qint64, maxBytes);
    QFETCH(QString, says);
    const fs::path file = path.startsWith('/') ? fs::path(path.toStdString()) : m_root / path.toStdString();
    const long rssBefore = peakRssKiB();
    const auto start = std::chrono::steady_clock::now();
    auto read = withinTenSeconds(
        [&] { return maxBytes < 0 ? readFileBytes(file) : readFileBytes(file, static_cast<std::size_t>(maxBytes)); },
        m_task / "pipe.cu");
    QVERIFY2(read, "the read blocked for 10 s");
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    // Nothing of /dev/zero was read: the peak memory did not grow by what an unbounded read takes.
    QVERIFY2(peakRssKiB() - rssBefore < 64 * 1024, qPrintable(QString::number(peakRssKiB() - rssBefore) + " KiB more"));
    if (says.isEmpty()) {
        KF_VERIFY_OK(*read);
        std::ifstream in(file, std::ios::binary);
        const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!path.startsWith("/proc"))
            QCOMPARE(read->value(), expected);
        else
            QVERIFY(read->value().find("Name:") != std::string::npos);
        return;
    }
    QVERIFY(!read->ok());
    QVERIFY2(qs(read->error().message()).contains(says), read->error().message().c_str());
    QCOMPARE(qs(read->error().file), qs(file.string()));
}

void TestFiles::taskFilesStayInsideTheTask_data()
{
    QTest::addColumn<QString>("relative");
    QTest::addColumn<QString>("says");   // empty: read, and it is k.cu
    QTest::newRow("a file of the task") << "k.cu" << "";
    QTest::newRow("a link that stays inside") << "alias.cu" << "";
    QTest::newRow("a link to a secret outside") << "leak.cu" << "leak.cu is a symbolic link to " + qs((m_outside / "secret.txt").string()) + ", outside the task folder";
    QTest::newRow("a link to a .cu outside") << "borrowed.cu" << "borrowed.cu is a symbolic link to " + qs((m_outside / "other.cu").string());
    QTest::newRow("a folder on the way links out") << "linked/secret.txt" << "(a folder on its way is a symbolic link)";
    QTest::newRow("climbing out") << "../outside/secret.txt" << "outside the task folder";
    QTest::newRow("an absolute path") << qs((m_outside / "secret.txt").string()) << "outside the task folder";
    QTest::newRow("a link to /dev/zero") << "zero.cu" << "zero.cu is a symbolic link to /dev/zero, outside the task folder";
    QTest::newRow("a FIFO in the task") << "pipe.cu" << "named pipe (FIFO)";
    QTest::newRow("the folder itself") << "." << "names the task folder itself";
}

void TestFiles::taskFilesStayInsideTheTask()
{
    QFETCH(QString, relative);
    QFETCH(QString, says);
    auto read = withinTenSeconds([&] { return readTaskFile(m_task, relative.toStdString()); }, m_task / "pipe.cu");
    QVERIFY2(read, "the read blocked for 10 s");
    if (says.isEmpty()) {
        KF_VERIFY_OK(*read);
        QCOMPARE(qs(read->value()), QStringLiteral("__global__ void k() {}\n"));
        return;
    }
    QVERIFY(!read->ok());
    const QString message = qs(read->error().message());
    QVERIFY2(message.contains(says), qPrintable(message));
    QVERIFY2(message.contains("copy the file into the task folder") || message.contains("FIFO"), qPrintable(message));
    QVERIFY2(!message.contains(kSecretLine), qPrintable(message));
    QCOMPARE(qs(read->error().file), qs((m_task / relative.toStdString()).string()));
}

void TestFiles::aTaskThatLinksOutDoesNotLoad_data()
{
    QTest::addColumn<QString>("example");   // under KF_SOURCE_DIR
    QTest::addColumn<QString>("file");      // replaced by a link
    QTest::addColumn<QString>("target");    // "secret", "other" or a name inside the task
    QTest::addColumn<QString>("pointer");   // empty: it loads
    QTest::newRow("a candidate linking to a secret") << "resources/examples/vector_add" << "naive.cu" << "secret" << "/candidates/0/file";
    QTest::newRow("a candidate linking to a .cu outside") << "resources/examples/vector_add" << "optimized.cu" << "other"
                                                          << "/candidates/1/file";
    QTest::newRow("a candidate linking inside the task") << "resources/examples/vector_add" << "naive.cu" << "optimized.cu" << "";
    QTest::newRow("reference.torchscript linking to a secret") << "tests/data/generate/gen_script_scale_softmax_fp32"
                                                               << "scale_softmax.pt" << "secret" << "/reference/torchscript";
}

void TestFiles::aTaskThatLinksOutDoesNotLoad()
{
    QFETCH(QString, example);
    QFETCH(QString, file);
    QFETCH(QString, target);
    QFETCH(QString, pointer);
    QTemporaryDir tmp;
    const fs::path task = fs::path(tmp.path().toStdString()) / "t";
    copyFolder(fs::path(KF_SOURCE_DIR) / example.toStdString(), task);
    const fs::path to = target == "secret" ? m_outside / "secret.txt" : target == "other" ? m_outside / "other.cu" : fs::path(target.toStdString());
    fs::remove(task / file.toStdString());
    fs::create_symlink(to, task / file.toStdString());
    auto t = loadTask(task);
    if (pointer.isEmpty()) {
        KF_VERIFY_OK(t);
        return;
    }
    QVERIFY(!t.ok());
    QCOMPARE(qs(t.error().pointer), pointer);
    const QString message = qs(t.error().message());
    QVERIFY2(message.contains(file + " is a symbolic link to " + qs(to.string()) + ", outside the task folder"), qPrintable(message));
    QVERIFY2(!message.contains(kSecretLine), qPrintable(message));
}

void TestFiles::theTaskHashNeverReadsOutside()
{
    // A task loaded while its TorchScript reference was its own, then the file swapped for a link
    // out: the hash (what evidence is bound to) must not depend on the outside file's bytes.
    QTemporaryDir tmp;
    const fs::path task = fs::path(tmp.path().toStdString()) / "t";
    copyFolder(fs::path(KF_SOURCE_DIR) / "tests/data/generate/gen_script_scale_softmax_fp32", task);
    auto t = loadTask(task);
    KF_VERIFY_OK(t);
    const std::string own = taskHash(*t);
    writeBytes(m_root / "a.pt", "first outside module");
    writeBytes(m_root / "b.pt", "second outside module");
    fs::remove(task / "scale_softmax.pt");
    fs::create_symlink(m_root / "a.pt", task / "scale_softmax.pt");
    const std::string first = taskHash(*t);
    fs::remove(task / "scale_softmax.pt");
    fs::create_symlink(m_root / "b.pt", task / "scale_softmax.pt");
    QCOMPARE(qs(taskHash(*t)), qs(first));
    QVERIFY(first != own);
}

QTEST_GUILESS_MAIN(TestFiles)
#include "tst_files.moc"
