// Follow Symbol Under Cursor's core (widgets/navigation/FollowSymbol.h): where F2 goes from an
// include line or an identifier in a task's kernel, and what it says when there is nowhere.
#include "widgets/navigation/FollowSymbol.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace kf::ui;

namespace {

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// Line 10 calls everything; line 11 uses the types.
const char* const kMain = "#include \"helpers.cuh\"\n"                                   // 1
                          "#define BLOCK 256\n"                                         // 2
                          "struct Pair { float a, b; };\n"                              // 3
                          "typedef float real_t;\n"                                     // 4
                          "using vec_t = float4;\n"                                     // 5
                          "__device__ float square(float x) { return x * x; }\n"        // 6
                          "// __device__ float ghost(float x) { return x; }\n"          // 7
                          "__global__ void k(float* out)\n"                             // 8
                          "{\n"                                                          // 9
                          "    out[0] = square(BLOCK) + helper(1.0f) + missing_fn(2) + ghost(3.0f);\n"   // 10
                          "    Pair p; real_t r; vec_t v;\n"                            // 11
                          "}\n";

const char* const kHelpers = "#pragma once\n"
                             "__device__ inline float helper(float x)\n"
                             "{\n"
                             "    return x;\n"
                             "}\n";

} // namespace

class TestFollowSymbol : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_task;

    std::optional<QString> fromDisk(const QString& path) const
    {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return std::nullopt;
        return QString::fromUtf8(f.readAll());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_task = QDir::cleanPath(m_dir.path() + "/task");
        QVERIFY(QDir().mkpath(m_task + "/sub"));
        QVERIFY(writeFile(m_task + "/main.cu", kMain));
        QVERIFY(writeFile(m_task + "/helpers.cuh", kHelpers));
        QVERIFY(writeFile(m_task + "/task.json", "{}"));
    }

    void followsFromTheKernel_data()
    {
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("expected");   // file:line:column, or the message
        QTest::newRow("an include opens the header") << 1 << 12 << "helpers.cuh:0:0";
        QTest::newRow("a function in the same file") << 10 << 15 << "main.cu:6:18";
        QTest::newRow("the cursor just after the name") << 10 << 19 << "main.cu:6:18";
        QTest::newRow("a macro") << 10 << 22 << "main.cu:2:9";
        QTest::newRow("a function in another file of the task") << 10 << 30 << "helpers.cuh:2:25";
        QTest::newRow("a struct") << 11 << 5 << "main.cu:3:8";
        QTest::newRow("a typedef") << 11 << 13 << "main.cu:4:15";
        QTest::newRow("a using alias") << 11 << 23 << "main.cu:5:7";
        QTest::newRow("the kernel's own name") << 8 << 16 << "main.cu:8:17";
        QTest::newRow("a name nobody defines") << 10 << 46 << "No definition of missing_fn in this task.";
        QTest::newRow("a definition inside a comment does not count") << 10 << 62 << "No definition of ghost in this task.";
        QTest::newRow("nothing under the cursor") << 10 << 12 << "No symbol under the cursor.";
        QTest::newRow("a number is not a symbol") << 2 << 15 << "No symbol under the cursor.";
    }
    void followsFromTheKernel()
    {
        QFETCH(int, line);
        QFETCH(int, index);
        QFETCH(QString, expected);
        const FollowOutcome o = followSymbol(m_task + "/main.cu", QString::fromUtf8(kMain), line, index, m_task,
                                             [this](const QString& p) { return fromDisk(p); });
        const QString got = o.target ? QStringLiteral("%1:%2:%3")
                                           .arg(QFileInfo(o.target->path).fileName())
                                           .arg(o.target->line)
                                           .arg(o.target->column)
                                     : o.message;
        QCOMPARE(got, expected);
        if (o.target)
            QVERIFY2(QFileInfo(o.target->path).isAbsolute(), qPrintable(o.target->path));
    }

    void resolvesIncludes_data()
    {
        QTest::addColumn<QString>("file");   // relative to the task
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("expected");   // path relative to the task, or the message
        QTest::newRow("next to the file") << "main.cu" << "#include \"helpers.cuh\"" << "helpers.cuh";
        QTest::newRow("from a subfolder, in the task folder") << "sub/extra.cu" << "  #  include \"helpers.cuh\" // x"
                                                              << "helpers.cuh";
        QTest::newRow("angle brackets") << "main.cu" << "#include <helpers.cuh>" << "helpers.cuh";
        QTest::newRow("a header that is not there")
            << "sub/extra.cu" << "#include \"nope.cuh\"" << "Cannot find nope.cuh next to extra.cu or in the task folder.";
    }
    void resolvesIncludes()
    {
        QFETCH(QString, file);
        QFETCH(QString, line);
        QFETCH(QString, expected);
        const FollowOutcome o = followSymbol(m_task + "/" + file, line + "\n", 1, 3, m_task,
                                             [this](const QString& p) { return fromDisk(p); });
        QCOMPARE(o.target ? QDir(m_task).relativeFilePath(o.target->path) : o.message, expected);
    }

    // An open editor's unsaved text is read through the callback, not the file on disk.
    void readsOtherFilesThroughTheCallback()
    {
        const QString helpers = m_task + "/helpers.cuh";
        const FollowOutcome o = followSymbol(m_task + "/main.cu", QString::fromUtf8(kMain), 10, 30, m_task,
                                             [&](const QString& p) -> std::optional<QString> {
                                                 if (p == helpers)
                                                     return QStringLiteral("\n\n\n__device__ float helper(float x) { return 2 * x; }\n");
                                                 return fromDisk(p);
                                             });
        QVERIFY(o.target);
        QCOMPARE(o.target->path, helpers);
        QCOMPARE(o.target->line, 4);
        QCOMPARE(o.target->column, 18);
    }

    void findsDefinitions_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("line");   // 0: none
        QTest::newRow("a prototype is not a definition") << "float f(float);\nfloat f(float x) { return x; }" << "f" << 2;
        QTest::newRow("a call is not a definition") << "void g() { f(1); }" << "f" << 0;
        QTest::newRow("a call after return is not a definition") << "int g() { return f(1); }\nint f(int) {\n}" << "f" << 2;
        QTest::newRow("a template function") << "template <int N>\n__device__ T load(const T* p) { return *p; }" << "load" << 2;
        QTest::newRow("a const member function") << "struct S {\n  int size() const { return 1; }\n};" << "size" << 2;
        QTest::newRow("a forward declaration is not a definition") << "struct Tile;\nstruct Tile {};" << "Tile" << 2;
        QTest::newRow("a struct with bases") << "struct Derived : Base {};" << "Derived" << 1;
        QTest::newRow("an enum class") << "enum class Mode { A, B };" << "Mode" << 1;
        QTest::newRow("typedef of an anonymous struct") << "typedef struct {\n  float x;\n} vec1;" << "vec1" << 3;
        QTest::newRow("typedef of a function pointer") << "typedef void (*callback)(int);" << "callback" << 1;
        QTest::newRow("the source type of a typedef is not defined there") << "typedef float real;" << "float" << 0;
        QTest::newRow("a #define with arguments") << "#define MAX(a, b) ((a) > (b) ? (a) : (b))" << "MAX" << 1;
        QTest::newRow("a name in a string") << "const char* s = \"void f() {\";" << "f" << 0;
    }
    void findsDefinitions()
    {
        QFETCH(QString, source);
        QFETCH(QString, name);
        QFETCH(int, line);
        const std::optional<FollowTarget> t = findDefinition(source, name);
        QCOMPARE(t ? t->line : 0, line);
    }
};

QTEST_GUILESS_MAIN(TestFollowSymbol)
#include "tst_followsymbol.moc"
