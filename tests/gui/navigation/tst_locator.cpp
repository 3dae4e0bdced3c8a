// The locator's core (widgets/navigation/Locator.h): what Ctrl+K lists first for what the user
// types, its "k " and "f " filters, and the kernels it finds in CUDA sources.
#include "widgets/navigation/Locator.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace kf::ui;

namespace {

std::vector<LocatorItem> filesNamed(const QStringList& names)
{
    std::vector<LocatorItem> items;
    for (const QString& n : names)
        items.push_back({LocatorItem::Kind::File, n, QString(), "/ws/" + n, 0, 0});
    return items;
}

QStringList namesOf(const std::vector<LocatorItem>& items)
{
    QStringList out;
    for (const LocatorItem& i : items)
        out << i.name;
    return out;
}

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

} // namespace

class TestLocator : public QObject {
    Q_OBJECT
private slots:
    void bestMatchesFirst_data()
    {
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QString>("query");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("prefix beats word start beats substring")
            << QStringList{"xsoftmaxy", "max_softmax", "softmax_rows"} << "soft"
            << QStringList{"softmax_rows", "max_softmax", "xsoftmaxy"};
        QTest::newRow("the exact name first") << QStringList{"vector_add_v2", "vector_add"} << "vector_add"
                                              << QStringList{"vector_add", "vector_add_v2"};
        QTest::newRow("case-insensitive, shorter first") << QStringList{"layernorm_bf16", "LayerNorm.cu"} << "LAYERN"
                                                         << QStringList{"LayerNorm.cu", "layernorm_bf16"};
        QTest::newRow("a camelCase word counts as a word start")
            << QStringList{"xnormal", "fusedRmsNorm", "norm_kernel"} << "norm"
            << QStringList{"norm_kernel", "fusedRmsNorm", "xnormal"};
        QTest::newRow("letters in order match last") << QStringList{"rms_norm", "softmax_rows", "smr_tool"} << "smr"
                                                     << QStringList{"smr_tool", "softmax_rows"};
        QTest::newRow("nothing matches") << QStringList{"naive.cu", "optimized.cu"} << "zzz" << QStringList{};
        QTest::newRow("an empty query keeps the order") << QStringList{"task.json", "naive.cu"} << ""
                                                        << QStringList{"task.json", "naive.cu"};
        QTest::newRow("surrounding blanks are ignored") << QStringList{"naive.cu", "optimized.cu"} << "  opt "
                                                        << QStringList{"optimized.cu"};
    }
    void bestMatchesFirst()
    {
        QFETCH(QStringList, names);
        QFETCH(QString, query);
        QFETCH(QStringList, expected);
        QCOMPARE(namesOf(locate(filesNamed(names), query)), expected);
    }

    void prefixFilters_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("k: kernels only") << "k soft" << QStringList{"softmax_rows"};
        QTest::newRow("f: files only") << "f soft" << QStringList{"softmax.cu"};
        QTest::newRow("no filter: both, the file first (shorter)") << "soft"
                                                                   << QStringList{"softmax.cu", "softmax_rows"};
        QTest::newRow("k alone lists every kernel") << "k " << QStringList{"softmax_rows", "reduce"};
        QTest::newRow("k without a space is a query") << "k" << QStringList{"task.json"};
    }
    void prefixFilters()
    {
        QFETCH(QString, input);
        QFETCH(QStringList, expected);
        std::vector<LocatorItem> items{
            {LocatorItem::Kind::File, "softmax.cu", "", "/ws/softmax.cu", 0, 0},
            {LocatorItem::Kind::File, "task.json", "", "/ws/task.json", 0, 0},
            {LocatorItem::Kind::Kernel, "softmax_rows", "softmax.cu:3", "/ws/softmax.cu", 3, 17},
            {LocatorItem::Kind::Kernel, "reduce", "softmax.cu:9", "/ws/softmax.cu", 9, 17},
        };
        QCOMPARE(namesOf(locate(items, input)), expected);
    }

    void aSlashMatchesTheFolder()
    {
        std::vector<LocatorItem> items{
            {LocatorItem::Kind::File, "naive.cu", "softmax_fp32", "/ws/softmax_fp32/naive.cu", 0, 0},
            {LocatorItem::Kind::File, "naive.cu", "vector_add", "/ws/vector_add/naive.cu", 0, 0},
            {LocatorItem::Kind::Kernel, "vector_add", "vector_add/naive.cu:4", "/ws/vector_add/naive.cu", 4, 28},
        };
        const std::vector<LocatorItem> found = locate(items, "vector_add/nai");
        QCOMPARE(int(found.size()), 1);
        QCOMPARE(found.front().path, QStringLiteral("/ws/vector_add/naive.cu"));
        QVERIFY(found.front().kind == LocatorItem::Kind::File);
    }

    void limitCutsTheList()
    {
        QCOMPARE(int(locate(filesNamed({"a1", "a2", "a3", "a4"}), "a", 2).size()), 2);
    }

    void kernelScan_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QStringList>("expected");   // name@line:byteColumn
        QTest::newRow("a plain kernel") << "__global__ void add(float* a) {}" << QStringList{"add@1:17"};
        QTest::newRow("a template kernel") << "template<int N>\n__global__ void k(float* x)\n{}" << QStringList{"k@2:17"};
        QTest::newRow("template head on the same line")
            << "template <typename T, int B> __global__ void reduce(const T* x) {}" << QStringList{"reduce@1:46"};
        QTest::newRow("launch bounds before the type")
            << "__global__ __launch_bounds__(256) void k(float* x) {}" << QStringList{"k@1:40"};
        QTest::newRow("launch bounds after the type")
            << "__global__ void __launch_bounds__(256, 2) k2(float*) {}" << QStringList{"k2@1:43"};
        QTest::newRow("extern C") << "extern \"C\" __global__ void vec(float* a) {}" << QStringList{"vec@1:28"};
        QTest::newRow("name on its own line") << "__global__\nvoid\nsoftmax_rows(float* x) {}"
                                              << QStringList{"softmax_rows@3:1"};
        QTest::newRow("comments make no kernel")
            << "// __global__ void fake(int) {}\n/* __global__ void fake2()\n */\n__global__ void real() {}"
            << QStringList{"real@4:17"};
        QTest::newRow("strings make no kernel")
            << "const char* s = \"__global__ void fake(\";\n__global__ void real() {}" << QStringList{"real@2:17"};
        // Found by fuzz_locator: an unterminated literal swallowed its newline, so every kernel
        // after it was reported one line early.
        QTest::newRow("an unterminated string ends with its line")
            << "const char* s = \"open;\n__global__ void real() {}" << QStringList{"real@2:17"};
        QTest::newRow("an unterminated char ends with its line")
            << "char c = 'x;\n\n__global__ void real() {}" << QStringList{"real@3:17"};
        QTest::newRow("a backslash-newline inside a string")
            << "const char* s = \"a\\\nb\";\n__global__ void real() {}" << QStringList{"real@3:17"};
        QTest::newRow("a macro makes no kernel") << "#define K __global__ void fake(\n__global__ void real() {}"
                                                 << QStringList{"real@2:17"};
        QTest::newRow("device functions are not kernels")
            << "__device__ float f(float x) { return x; }\n__global__ void a() {}\n__global__ void b() {}"
            << QStringList{"a@2:17", "b@3:17"};
        QTest::newRow("a declaration counts") << "__global__ void k(float*);" << QStringList{"k@1:17"};
        QTest::newRow("columns count bytes") << "/* \u00e9 */ __global__ void k() {}" << QStringList{"k@1:26"};
        QTest::newRow("a tab is one column") << "\t__global__ void k() {}" << QStringList{"k@1:18"};
        QTest::newRow("no kernel at all") << "int main() { return 0; }" << QStringList{};
    }
    void kernelScan()
    {
        QFETCH(QString, source);
        QFETCH(QStringList, expected);
        QStringList got;
        for (const KernelSymbol& k : scanKernels(source))
            got << QStringLiteral("%1@%2:%3").arg(k.name).arg(k.line).arg(k.column);
        QCOMPARE(got, expected);
    }

    // A task folder as the window sees it: task.json, sources and headers listed, other files
    // not; kernels read from an open editor's unsaved text before the disk.
    void collectsFilesAndKernels()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString task = dir.path() + "/softmax";
        QVERIFY(QDir().mkpath(task + "/variants"));
        QVERIFY(writeFile(task + "/task.json", "{}"));
        QVERIFY(writeFile(task + "/naive.cu", "__global__ void naive_softmax(float* x) {}\n"));
        QVERIFY(writeFile(task + "/common.cuh", "#pragma once\n__global__ void helper_kernel() {}\n"));
        QVERIFY(writeFile(task + "/notes.txt", "__global__ void not_listed() {}\n"));
        QVERIFY(writeFile(task + "/variants/v2.cu", "__global__ void v2() {}\n"));

        const QStringList files = taskFiles(task, {"variants/v2.cu", "missing.cu"});
        QCOMPARE(files, (QStringList{task + "/common.cuh", task + "/naive.cu", task + "/task.json", task + "/variants/v2.cu"}));

        QHash<QString, QString> buffers{{task + "/naive.cu", "\n\n__global__ void edited_softmax(float* x) {}\n"}};
        const std::vector<LocatorItem> items = collectLocatorItems(files, dir.path(), buffers);
        QStringList kernels;
        for (const LocatorItem& i : items)
            if (i.kind == LocatorItem::Kind::Kernel)
                kernels << QStringLiteral("%1 %2 %3").arg(i.name, i.detail).arg(i.line);
        QCOMPARE(kernels, (QStringList{"helper_kernel softmax/common.cuh:2 2", "edited_softmax softmax/naive.cu:3 3",
                                       "v2 softmax/variants/v2.cu:1 1"}));
        QCOMPARE(items.front().name, QStringLiteral("common.cuh"));
        QCOMPARE(items.front().detail, QStringLiteral("softmax"));
    }

    // How long collecting a workspace of 100 sources takes (the window does it in a worker on
    // every Ctrl+K): printed, so a regression shows in the log.
    void collectingAHundredFilesIsCheap()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QByteArray body;
        for (int i = 0; i < 300; ++i)
            body += "    x[i] = x[i] * 2.0f + 1.0f; // a line of kernel body\n";
        QStringList files;
        for (int f = 0; f < 100; ++f) {
            const QString path = QStringLiteral("%1/k%2.cu").arg(dir.path()).arg(f);
            QVERIFY(writeFile(path, "__global__ void k" + QByteArray::number(f) + "(float* x, int i) {\n" + body + "}\n"));
            files << path;
        }
        QElapsedTimer timer;
        timer.start();
        const std::vector<LocatorItem> items = collectLocatorItems(files, dir.path());
        qInfo("collected 100 files of 300 lines (%d items) in %lld ms", int(items.size()), timer.elapsed());
        QCOMPARE(int(items.size()), 200);
    }
};

QTEST_GUILESS_MAIN(TestLocator)
#include "tst_locator.moc"
