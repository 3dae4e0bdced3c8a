// Source <-> assembly line mapping on real compiler output: PTX with -lineinfo and nvdisasm
// listings, saved from a real build (tests/data/lineinfo, so they run on machines without
// NVRTC) and produced live by kf::compile. The interesting cases are prelude calls: their code
// comes from kf/*.cuh but must show up under the user's call line.
#include "engine/analysis/LineInfo.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Files.h"
#include "engine/core/Process.h"
#include "engine/task/Task.h"
#include "testutil.h"

#include <QFile>
#include <QHash>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using namespace kf;

namespace {

std::string readData(const QString& name)
{
    QFile f(QString(KF_TEST_DATA_DIR) + "/lineinfo/" + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test data %s", qPrintable(name));
    return f.readAll().toStdString();
}

QStringList textLines(const std::string& text) { return QString::fromStdString(text).split(QLatin1Char('\n')); }

/// The assembly text of the lines mapped to `sourceLine`, joined for readable failures.
QString mappedText(const LineMap& map, const QStringList& asmLines, int sourceLine)
{
    QStringList out;
    for (int l : map.asmLinesFor(sourceLine))
        out << asmLines.value(l - 1).trimmed();
    return out.join(QLatin1Char('\n'));
}

/// 1-based line of the first source line containing `marker`, 0 when absent.
int lineOf(const std::string& source, const QString& marker)
{
    const QStringList lines = textLines(source);
    for (int i = 0; i < lines.size(); ++i)
        if (lines[i].contains(marker))
            return i + 1;
    return 0;
}

} // namespace

class TestLineInfo : public QObject {
    Q_OBJECT
private slots:
    void savedOutput_data();
    void savedOutput();
    void inlinedCodeNeverFallsToZero_data();
    void inlinedCodeNeverFallsToZero();
    void plainLineInfoCannotPlaceInlinedCode();
    void fileNames_data();
    void fileNames();
    void otherFileNameMapsNothing();
    void kernelsAreListed();
    void liveCompile_data();
    void liveCompile();
    void engineSassCarriesUserLines();

private:
    struct Build {
        std::string source;
        std::string fileName;
        CompileResult result;
    };
    /// Compiles once per file for all rows (NVRTC takes a second per build).
    const Build* build(const QString& file);
    QHash<QString, Build> m_builds;
};

// The saved build of tests/data/lineinfo/rowsum.cu (sm_90): lines 3 and 7 hold no code, line 8
// calls kf::warp_reduce_sum, which inlines two levels of prelude code.
void TestLineInfo::savedOutput_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("sourceLine");
    QTest::addColumn<QStringList>("opcodes"); // must all appear; empty = no code at all

    const QStringList none;
    QTest::newRow("ptx: kernel entry reads its parameters") << "rowsum.ptx" << 4 << QStringList{"ld.param"};
    QTest::newRow("ptx: guarded load of x") << "rowsum.ptx" << 6 << QStringList{"ld.global.f32"};
    QTest::newRow("ptx: prelude warp_reduce_sum at its call") << "rowsum.ptx" << 8 << QStringList{"shfl.sync.bfly", "add.f32"};
    QTest::newRow("ptx: if on threadIdx") << "rowsum.ptx" << 9 << QStringList{"setp.ne.s32"};
    QTest::newRow("ptx: store of the sum") << "rowsum.ptx" << 10 << QStringList{"st.global.f32"};
    QTest::newRow("ptx: comment line has no code") << "rowsum.ptx" << 3 << none;
    QTest::newRow("ptx: blank line has no code") << "rowsum.ptx" << 7 << none;
    QTest::newRow("ptx: past the end of the file") << "rowsum.ptx" << 400 << none;
    QTest::newRow("sass -gi: prelude warp_reduce_sum at its call") << "rowsum-gi.sass" << 8 << QStringList{"SHFL.BFLY", "FADD"};
    QTest::newRow("sass -gi: store of the sum") << "rowsum-gi.sass" << 10 << QStringList{"STG.E"};
    QTest::newRow("sass -gi: if on threadIdx") << "rowsum-gi.sass" << 9 << QStringList{"ISETP.NE"};
    QTest::newRow("sass -gi: comment line has no code") << "rowsum-gi.sass" << 3 << none;
    QTest::newRow("sass -g: store of the sum") << "rowsum-g.sass" << 10 << QStringList{"STG.E"};
}

void TestLineInfo::savedOutput()
{
    QFETCH(QString, file);
    QFETCH(int, sourceLine);
    QFETCH(QStringList, opcodes);
    const std::string text = readData(file);
    const LineMap map = file.endsWith(QLatin1String(".ptx")) ? mapPtxLines(text, "rowsum.cu") : mapSassLines(text, "rowsum.cu");
    const QStringList asmLines = textLines(text);
    QCOMPARE(map.sourceLineOfAsm.size(), size_t(asmLines.size()));
    const QString mapped = mappedText(map, asmLines, sourceLine);
    if (opcodes.isEmpty())
        QVERIFY2(mapped.isEmpty(), qPrintable(QStringLiteral("expected no code, got:\n") + mapped));
    for (const QString& op : opcodes)
        QVERIFY2(mapped.contains(op), qPrintable(op + QStringLiteral(" not among:\n") + mapped));
    for (int l : map.asmLinesFor(sourceLine))
        QCOMPARE(map.sourceLineFor(l), sourceLine);
}

void TestLineInfo::inlinedCodeNeverFallsToZero_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("opcode");
    QTest::newRow("ptx shuffles") << "rowsum.ptx" << "shfl.sync.bfly";
    QTest::newRow("sass -gi shuffles") << "rowsum-gi.sass" << "SHFL.BFLY";
}

// Every shuffle of the reduction belongs to line 8: none is lost to "no source line".
void TestLineInfo::inlinedCodeNeverFallsToZero()
{
    QFETCH(QString, file);
    QFETCH(QString, opcode);
    const std::string text = readData(file);
    const LineMap map = file.endsWith(QLatin1String(".ptx")) ? mapPtxLines(text, "rowsum.cu") : mapSassLines(text, "rowsum.cu");
    const QStringList asmLines = textLines(text);
    int seen = 0;
    for (int i = 0; i < asmLines.size(); ++i)
        if (asmLines[i].contains(opcode)) {
            ++seen;
            QCOMPARE(map.sourceLineFor(i + 1), 8);
        }
    QCOMPARE(seen, 5); // log2(32) butterfly steps
    QCOMPARE(map.sourceLines(), (std::vector<int>{4, 6, 8, 9, 10, 11}));
}

// nvdisasm -g names only the innermost file, so inlined header code cannot be placed: it must
// map to nothing rather than to a wrong line.
void TestLineInfo::plainLineInfoCannotPlaceInlinedCode()
{
    const std::string text = readData(QStringLiteral("rowsum-g.sass"));
    const LineMap map = mapSassLines(text, "rowsum.cu");
    const QStringList asmLines = textLines(text);
    for (int i = 0; i < asmLines.size(); ++i)
        if (asmLines[i].contains(QLatin1String("SHFL.BFLY")))
            QCOMPARE(map.sourceLineFor(i + 1), 0);
    QVERIFY(map.hasLineInfo());
}

void TestLineInfo::fileNames_data()
{
    QTest::addColumn<QString>("pathInOutput");
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<bool>("same");
    QTest::newRow("request name made absolute by NVRTC") << "/home/u/task/kernel.cu" << "kernel.cu" << true;
    QTest::newRow("task-relative request name") << "/home/u/task/src/kernel.cu" << "src/kernel.cu" << true;
    QTest::newRow("identical absolute paths") << "/a/optimized.cu" << "/a/optimized.cu" << true;
    QTest::newRow("name only a suffix of another name") << "/a/my_kernel.cu" << "kernel.cu" << false;
    QTest::newRow("prelude header is not the user's file") << "/a/kf/vec.cuh" << "kernel.cu" << false;
    QTest::newRow("empty request name") << "/a/kernel.cu" << "" << false;
}

void TestLineInfo::fileNames()
{
    QFETCH(QString, pathInOutput);
    QFETCH(QString, fileName);
    QFETCH(bool, same);
    QCOMPARE(sameSourceFile(pathInOutput.toStdString(), fileName.toStdString()), same);
}

void TestLineInfo::otherFileNameMapsNothing()
{
    const LineMap map = mapPtxLines(readData(QStringLiteral("rowsum.ptx")), "other.cu");
    QVERIFY(!map.hasLineInfo());
    QVERIFY(map.sourceLines().empty());
}

void TestLineInfo::kernelsAreListed()
{
    const std::string ptx = readData(QStringLiteral("rowsum.ptx"));
    const auto entries = ptxEntries(ptx);
    QCOMPARE(entries.size(), size_t(1));
    QCOMPARE(qs(entries[0].name), QStringLiteral("row_sum"));
    QVERIFY(textLines(ptx).value(entries[0].line - 1).contains(QLatin1String(".entry row_sum")));

    const std::string sass = readData(QStringLiteral("rowsum-gi.sass"));
    const auto functions = sassFunctions(sass);
    QCOMPARE(functions.size(), size_t(1));
    QCOMPARE(qs(functions[0].name), QStringLiteral("row_sum"));
    QVERIFY(textLines(sass).value(functions[0].line - 1).contains(QLatin1String(".text.row_sum")));
}

const TestLineInfo::Build* TestLineInfo::build(const QString& file)
{
    if (auto it = m_builds.find(file); it != m_builds.end())
        return &it.value();
    Build b;
    CompileRequest req;
    if (file.startsWith(QLatin1String("example:"))) { // example:<task>/<candidate>
        const QStringList parts = file.mid(8).split(QLatin1Char('/'));
        auto task = loadTask(std::filesystem::path(KF_SOURCE_DIR) / "resources/examples" / parts[0].toStdString());
        if (!task)
            return nullptr;
        for (const auto& c : task->candidates)
            if (qs(c.file) == parts[1]) {
                auto r = compileRequestFor(task.value(), c, "sm_90");
                if (!r)
                    return nullptr;
                req = std::move(r.value());
            }
    } else {
        req.source = readData(file);
        req.fileName = file.toStdString();
    }
    auto result = compile(req);
    if (!result || !result->success)
        return nullptr;
    b.source = req.source;
    b.fileName = req.fileName;
    b.result = std::move(result.value());
    return &m_builds.insert(file, std::move(b)).value();
}

void TestLineInfo::liveCompile_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("marker");     // identifies the source line
    QTest::addColumn<QString>("ptxOpcode");  // empty: the line must have no code
    QTest::addColumn<QString>("sassOpcode");

    const QString opt = QStringLiteral("example:vector_add/optimized.cu");
    QTest::newRow("prelude load_float4 inlined at its call")
        << opt << "va[u] = kf::load_float4(a + 4 * v)" << "ld.global.nc.v4.f32" << "LDG.E.128";
    QTest::newRow("prelude store_float4 inlined at its call")
        << opt << "kf::store_float4(c + 4 * v" << "st.global.v4.f32" << "STG.E.128";
    QTest::newRow("scalar tail add") << opt << "c[i] = a[i] + b[i];" << "add.f32" << "FADD";
    QTest::newRow("comment line has no code") << opt << "// Scalar tail" << "" << "";
    QTest::newRow("naive bounds check")
        << QStringLiteral("example:vector_add/naive.cu") << "if (i < n)" << "setp" << "ISETP";
    QTest::newRow("nested prelude inlining (warp_reduce_sum)")
        << QStringLiteral("rowsum.cu") << "kf::warp_reduce_sum(v)" << "shfl.sync.bfly" << "SHFL.BFLY";
}

void TestLineInfo::liveCompile()
{
    QFETCH(QString, file);
    QFETCH(QString, marker);
    QFETCH(QString, ptxOpcode);
    QFETCH(QString, sassOpcode);
    if (!nvrtcVersion())
        QSKIP(("libnvrtc is not available on this machine: " + nvrtcVersion().error().why).c_str());
    const Build* b = build(file);
    QVERIFY2(b, "the kernel did not compile");
    const int line = lineOf(b->source, marker);
    QVERIFY2(line > 0, qPrintable(marker));

    const LineMap ptxMap = mapPtxLines(b->result.ptx, b->fileName);
    const QString ptxMapped = mappedText(ptxMap, textLines(b->result.ptx), line);
    QVERIFY2(ptxOpcode.isEmpty() ? ptxMapped.isEmpty() : ptxMapped.contains(ptxOpcode), qPrintable(ptxMapped));

    // The call site of inlined code is only in nvdisasm's -gi listing.
    const std::string nvdisasm = findTool("nvdisasm", "KF_NVDISASM");
    if (nvdisasm.empty())
        QSKIP("nvdisasm not found (set KF_NVDISASM): the SASS half of this row cannot run");
    QTemporaryDir dir;
    const std::string cubinPath = (std::filesystem::path(dir.path().toStdString()) / "k.cubin").string();
    KF_VERIFY_OK(writeFileAtomic(cubinPath, b->result.cubin));
    auto out = runProcess({nvdisasm, "-c", "-gi", cubinPath});
    KF_VERIFY_OK(out);
    QCOMPARE(out->exitCode, 0);
    const LineMap sassMap = mapSassLines(out->out, b->fileName);
    const QString sassMapped = mappedText(sassMap, textLines(out->out), line);
    QVERIFY2(sassOpcode.isEmpty() ? sassMapped.isEmpty() : sassMapped.contains(sassOpcode), qPrintable(sassMapped));
}

// Whatever flags the engine gives nvdisasm, code written in the user's file maps back to it.
void TestLineInfo::engineSassCarriesUserLines()
{
    if (!nvrtcVersion())
        QSKIP(("libnvrtc is not available on this machine: " + nvrtcVersion().error().why).c_str());
    const Build* b = build(QStringLiteral("example:vector_add/optimized.cu"));
    QVERIFY(b);
    if (b->result.sass.empty())
        QSKIP(("no SASS from the engine: " + b->result.sassUnavailableReason).c_str());
    if (b->result.sass.find("//## File") == std::string::npos)
        QSKIP("the engine's disassembler printed no line info (cuobjdump does not): nothing to map");
    const LineMap map = mapSassLines(b->result.sass, b->fileName);
    const int line = lineOf(b->source, QStringLiteral("c[i] = a[i] + b[i];"));
    QVERIFY(mappedText(map, textLines(b->result.sass), line).contains(QLatin1String("FADD")));
}

QTEST_GUILESS_MAIN(TestLineInfo)
#include "tst_lineinfo.moc"
