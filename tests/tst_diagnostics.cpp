// Diagnostics as values: the line and column a user's editor will underline, for a table of
// broken kernels compiled by the real NVRTC, plus log-parsing rows for shapes NVRTC prints.
#include "engine/compile/Compiler.h"
#include "engine/compile/Diagnostic.h"
#include "testutil.h"

#include <QTest>

using namespace kf;

class TestDiagnostics : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void brokenKernels_data();
    void brokenKernels();
    void parsesLog_data();
    void parsesLog();
    void hostileLogs_data();
    void hostileLogs();
    void failedBuildAlwaysHasAnError_data();
    void failedBuildAlwaysHasAnError();
    void tooMuchSharedMemoryIsAnError();
    void formatsLikeACompiler();
    void cleanKernelHasNoDiagnostics();
    void nameExpressionErrorIsReported();
};

void TestDiagnostics::initTestCase()
{
    if (!nvrtcVersion())
        QSKIP(("libnvrtc is not available on this machine: " + nvrtcVersion().error().why).c_str());
}

void TestDiagnostics::brokenKernels_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("severity");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("message");
    // NVRTC numbers warnings ("#177-D") but not errors, so errors carry no code.
    auto row = [](const char* name, const char* src, int line, int col, const char* sev, const char* code, const char* msg) {
        QTest::newRow(name) << src << line << col << sev << code << msg;
    };
    row("undefined identifier",
        "extern \"C\" __global__ void k(float* x, int n) {\n"
        "  int i = threadIdx.x;\n"
        "  if (i < n) x[i] = y + 1.0f;\n"
        "}\n",
        3, 21, "error", "", "identifier \"y\" is undefined");
    row("missing semicolon",
        "extern \"C\" __global__ void k(float* x) {\n"
        "  float a = 1.0f\n"
        "  x[0] = a;\n"
        "}\n",
        3, 3, "error", "", "expected a \";\"");
    row("unused variable warning",
        "extern \"C\" __global__ void k(float* x) {\n"
        "    int unused = 3;\n"
        "    x[0] = 1.0f;\n"
        "}\n",
        2, 9, "warning", "177-D", "variable \"unused\" was declared but never referenced");
    row("tab-indented error",
        "extern \"C\" __global__ void k(float* x) {\n"
        "\tx[0] = undefined_thing;\n"
        "}\n",
        2, 9, "error", "", "identifier \"undefined_thing\" is undefined");
    row("type mismatch deep in a line",
        "__device__ void f(int* p) {}\n"
        "extern \"C\" __global__ void k(float* x) { f(x); }\n",
        2, 44, "error", "", "argument of type \"float *\" is incompatible with parameter of type \"int *\"");
    row("missing prelude header",
        "#include <kf/does_not_exist.cuh>\n"
        "extern \"C\" __global__ void k() {}\n",
        1, 33, "error", "", "cannot open source file \"kf/does_not_exist.cuh\"");
    // Issue 23: ptxas' own line for bad inline PTX, at the asm statement (it said only "Ptx
    // assembly aborted due to errors" before).
    row("bad inline PTX",
        "extern \"C\" __global__ void k(float* y) {\n"
        "  asm volatile(\"bogus.instruction %0;\" : : \"f\"(y[0]));\n"
        "}\n",
        2, 3, "error", "", "Unknown modifier '.instruction' (PTX line");
    // Issue 41: a PTX syntax error is a ptxas "fatal" line, which was dropped (only "Ptx
    // assembly aborted due to errors" was left, with no line).
    row("inline PTX with a syntax error",
        "extern \"C\" __global__ void k(float* y) {\n"
        "  asm volatile(\"mov.f32 %0, ;\" : \"=f\"(y[0]));\n"
        "}\n",
        2, 3, "error", "", "Parsing error near ';': syntax error (PTX line");
}

void TestDiagnostics::brokenKernels()
{
    QFETCH(QString, source);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, severity);
    QFETCH(QString, code);
    QFETCH(QString, message);
    CompileRequest req;
    req.source = source.toStdString();
    req.fileName = "cand.cu";
    req.options.arch = "sm_90";
    req.wantSass = false;
    auto r = compile(req);
    KF_VERIFY_OK(r);
    QVERIFY2(!r->diagnostics.empty(), r->log.c_str());
    const Diagnostic& d = r->diagnostics.front();
    QCOMPARE(qs(d.file), QStringLiteral("cand.cu"));
    QCOMPARE(d.line, line);
    QCOMPARE(d.column, column);
    QCOMPARE(qs(std::string(severityName(d.severity))), severity);
    QCOMPARE(qs(d.code).remove("-D"), QString(code).remove("-D"));
    if (message.endsWith("(PTX line")) // the PTX line number depends on NVRTC's output
        QVERIFY2(qs(d.message).startsWith(message), d.message.c_str());
    else
        QCOMPARE(qs(d.message.substr(0, d.message.find('\n'))), message);
    QCOMPARE(r->success, severity != "error");
    // The echoed source line is the user's line, without NVRTC's indentation.
    QStringList lines = source.split('\n');
    QCOMPARE(qs(d.sourceLine), lines[line - 1]);
}

void TestDiagnostics::parsesLog_data()
{
    QTest::addColumn<QString>("log");
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("message");
    QTest::newRow("multi-line message keeps its detail")
        << "k.cu(4): error: no instance of function template \"f\" matches the argument list\n"
           "            argument types are: (float *)\n"
           "    f(x);\n"
           "    ^\n\n1 error detected in the compilation of \"k.cu\".\n"
        << 1 << 4 << 3 << "no instance of function template \"f\" matches the argument list\nargument types are: (float *)";
    QTest::newRow("caret past end of line")
        << "k.cu(2): error: expected a \";\"\n    int a = 1\n             ^\n\n" << 1 << 2 << 12 << "expected a \";\"";
    QTest::newRow("ptxas error has no line")
        << "ptxas error   : Entry function 'k' uses too much shared data (0x40000 bytes, 0xc000 max)\n" << 1 << 0 << 0
        << "Entry function 'k' uses too much shared data (0x40000 bytes, 0xc000 max)";
    QTest::newRow("ptxas info is not a diagnostic")
        << "ptxas info    : 0 bytes gmem\nptxas info    : Used 8 registers\n" << 0 << 0 << 0 << "";
    QTest::newRow("remark footer ignored")
        << "k.cu(1): warning #177-D: variable \"u\" was declared but never referenced\n  int u;\n      ^\n\n"
           "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
        << 1 << 1 << 5 << "variable \"u\" was declared but never referenced";
    QTest::newRow("ptxas parsing error keeps its PTX line")
        << "ptxas application ptx input, line 28; fatal   : Parsing error near ';': syntax error\n"
           "ptxas fatal   : Ptx assembly aborted due to errors\n"
        << 2 << 0 << 0 << "Parsing error near ';': syntax error (PTX line 28)";
    QTest::newRow("no echo, no column")
        << "k.cu(9): catastrophic error: out of memory\n" << 1 << 9 << 0 << "out of memory";
}

void TestDiagnostics::parsesLog()
{
    QFETCH(QString, log);
    QFETCH(int, count);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, message);
    auto d = parseNvrtcLog(log.toStdString());
    QCOMPARE(int(d.size()), count);
    if (count) {
        QCOMPARE(d[0].line, line);
        QCOMPARE(d[0].column, column);
        QCOMPARE(qs(d[0].message), message);
    }
}

// Logs no compiler should print but a parser must survive: NULs, cut lines, other tools'
// formats, megabyte lines. `errors` is the number of error diagnostics expected.
void TestDiagnostics::hostileLogs_data()
{
    QTest::addColumn<QByteArray>("log");
    QTest::addColumn<int>("errors");
    QTest::addColumn<QString>("firstMessage");
    const QByteArray ptxas = "ptxas error   : Entry function 'big' uses too much shared data (0x20000 bytes, 0xc000 max)\n";
    QTest::newRow("ptxas error after a NUL") << (QByteArray("\n", 1) + QByteArray(1, '\0') + ptxas) << 1
                                             << "Entry function 'big' uses too much shared data (0x20000 bytes, 0xc000 max)";
    QTest::newRow("NUL inside the front end's part")
        << (QByteArray("k.cu(3): error: expected a \";\"") + QByteArray(1, '\0') + "k.cu(4): error: bad\n") << 2
        << "expected a \";\"";
    QTest::newRow("only NULs") << QByteArray(64, '\0') << 0 << "";
    QTest::newRow("header cut before the message") << QByteArray("k.cu(3): err") << 0 << "";
    QTest::newRow("header cut after the colon") << QByteArray("k.cu(3): error: ") << 1 << "";
    QTest::newRow("line number too long") << QByteArray("k.cu(99999999999999999999): error: x\n") << 0 << "";
    QTest::newRow("empty parentheses") << QByteArray("k.cu(): error: x\n") << 0 << "";
    QTest::newRow("ptxas fatal") << QByteArray("ptxas fatal   : Ptx assembly aborted due to errors\n") << 1
                                 << "Ptx assembly aborted due to errors";
    QTest::newRow("indented nvlink error") << QByteArray("  nvlink error   : Undefined reference to 'f'\n") << 1
                                           << "Undefined reference to 'f'";
    QTest::newRow("a gcc-style line is not ours") << QByteArray("k.cu:3:5: error: nope\n") << 0 << "";
    QTest::newRow("caret with no echo") << QByteArray("k.cu(2): error: x\n^\n") << 1 << "x\n^";
    QTest::newRow("megabyte line") << QByteArray(1 << 20, 'x') << 0 << "";
    QTest::newRow("megabyte message") << (QByteArray("k.cu(1): error: ") + QByteArray(1 << 20, 'y')) << 1
                                      << QString(1 << 20, 'y');
    QByteArray many;
    for (int i = 1; i <= 20000; ++i)
        many += "k.cu(" + QByteArray::number(i) + "): warning #177-D: unused\n";
    QTest::newRow("twenty thousand warnings") << many << 0 << "";
    QByteArray binary(4096, '\0');
    for (int i = 0; i < binary.size(); ++i)
        binary[i] = char((i * 131 + 7) & 0xff);
    QTest::newRow("binary noise") << binary << 0 << "";
}

void TestDiagnostics::hostileLogs()
{
    QFETCH(QByteArray, log);
    QFETCH(int, errors);
    QFETCH(QString, firstMessage);
    const auto d = parseNvrtcLog(std::string_view(log.constData(), size_t(log.size())));
    int seen = 0;
    for (const auto& x : d)
        seen += x.severity == Diagnostic::Severity::Error;
    QCOMPARE(seen, errors);
    if (errors > 0)
        QCOMPARE(qs(d.front().message), firstMessage);
}

void TestDiagnostics::failedBuildAlwaysHasAnError_data()
{
    QTest::addColumn<QByteArray>("log");
    QTest::addColumn<QString>("contains");
    QTest::newRow("empty log") << QByteArray() << "NVRTC's log is empty";
    QTest::newRow("unknown format") << QByteArray("something broke in a way we never saw\n") << "something broke in a way we never saw";
    QTest::newRow("ptxas info only") << QByteArray("ptxas info    : Used 8 registers\n") << "NVRTC's log is empty";
    QTest::newRow("ptxas error after a NUL")
        << (QByteArray(1, '\0') + "ptxas error   : Entry function 'big' uses too much shared data (0x20000 bytes, 0xc000 max)")
        << "too much shared data";
    QTest::newRow("warnings only") << QByteArray("k.cu(1): warning #177-D: unused\n") << "k.cu(1): warning #177-D: unused";
}

void TestDiagnostics::failedBuildAlwaysHasAnError()
{
    QFETCH(QByteArray, log);
    QFETCH(QString, contains);
    const auto d = failedBuildDiagnostics(std::string_view(log.constData(), size_t(log.size())), "cand.cu",
                                          "NVRTC_ERROR_COMPILATION");
    int errors = 0;
    QString all;
    for (const auto& x : d) {
        errors += x.severity == Diagnostic::Severity::Error;
        all += qs(x.message) + "\n";
    }
    QVERIFY2(errors >= 1, qPrintable(all));
    QVERIFY2(all.contains(contains), qPrintable(all));
}

// 128 KiB of static shared memory: ptxas refuses it after a NUL in NVRTC's log. The build must
// fail with ptxas' own words as an error, never "0 error(s)".
void TestDiagnostics::tooMuchSharedMemoryIsAnError()
{
    CompileRequest req;
    req.source = "extern \"C\" __global__ void big(float* y) {\n"
                 "  __shared__ float tile[32768];\n"
                 "  tile[threadIdx.x] = y[threadIdx.x];\n"
                 "  __syncthreads();\n"
                 "  y[threadIdx.x] = tile[(threadIdx.x + 1) % 32768];\n"
                 "}\n";
    req.fileName = "big.cu";
    req.options.arch = "sm_90";
    req.wantSass = false;
    auto r = compile(req);
    KF_VERIFY_OK(r);
    QVERIFY(!r->success);
    QVERIFY2(r->errorCount() >= 1, r->log.c_str());
    bool quoted = false;
    for (const auto& d : r->diagnostics)
        quoted = quoted || (d.severity == Diagnostic::Severity::Error && d.message.find("shared data") != std::string::npos);
    QVERIFY2(quoted, r->log.c_str());
}

void TestDiagnostics::formatsLikeACompiler()
{
    Diagnostic d{"cand.cu", 3, 21, Diagnostic::Severity::Error, "20", "identifier \"y\" is undefined",
                 "  if (i < n) x[i] = y + 1.0f;"};
    QCOMPARE(qs(formatDiagnostic(d)), QStringLiteral("cand.cu:3:21: error #20: identifier \"y\" is undefined\n"
                                                     "    if (i < n) x[i] = y + 1.0f;\n"
                                                     "                      ^\n"));
    auto back = diagnosticFromJson(toJson(d));
    QCOMPARE(back.column, 21);
    QCOMPARE(qs(back.sourceLine), qs(d.sourceLine));
}

void TestDiagnostics::cleanKernelHasNoDiagnostics()
{
    CompileRequest req;
    req.source = "#include <kf/prelude.cuh>\nextern \"C\" __global__ void k(float* x, int n) {\n"
                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = 2.0f * x[i];\n}\n";
    req.wantSass = false;
    auto r = compile(req);
    KF_VERIFY_OK(r);
    QVERIFY2(r->success, r->log.c_str());
    QCOMPARE(r->errorCount(), 0);
    QCOMPARE(r->warningCount(), 0);
    QVERIFY(!r->ptx.empty());
    QVERIFY(!r->cubin.empty());
}

void TestDiagnostics::nameExpressionErrorIsReported()
{
    CompileRequest req;
    req.source = "template <int B> __global__ void k(float* x) { x[0] = B; }\n";
    req.nameExpressions = {"k<128>", "missing_kernel<3>"};
    req.wantSass = false;
    auto r = compile(req);
    KF_VERIFY_OK(r);
    QVERIFY(!r->success);
    QVERIFY(r->errorCount() >= 1);
    QVERIFY2(r->log.find("missing_kernel") != std::string::npos, r->log.c_str());
}

QTEST_GUILESS_MAIN(TestDiagnostics)
#include "tst_diagnostics.moc"
