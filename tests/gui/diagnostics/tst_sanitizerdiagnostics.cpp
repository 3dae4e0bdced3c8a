// compute-sanitizer's findings as diagnostics: each finding at its line in the candidate, with the
// summary a report gives; racecheck's other access as a note; a failed tool as an error without a
// line; and, as the user edits, a finding follows its line and goes when its line is changed.
// The findings come from compute-sanitizer's own XML of an H100 run (tests/fixtures/sanitizer).
#include "testutil.h"

#include "engine/sanitize/SanitizerXml.h"
#include "widgets/diagnostics/DiagnosticsModel.h"
#include "widgets/diagnostics/SanitizerDiagnostics.h"

#include <QFile>
#include <QTest>

using kf::Diagnostic;
using kf::protocol::SanitizerFinding;
using kf::protocol::SanitizerSection;
using kf::ui::DiagnosticsModel;
using kf::ui::followEdits;
using kf::ui::sanitizerDiagnostics;
using Severity = kf::Diagnostic::Severity;

namespace {

const QString kCandidate = QStringLiteral("/work/task/oob_read.cu");

SanitizerSection sectionFromFixture(const char* file, const char* tool)
{
    QFile f(QString(KF_SOURCE_DIR) + "/tests/fixtures/sanitizer/" + QString::fromLatin1(file));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", file);
    const QByteArray xml = f.readAll();
    auto parsed = kf::sanitize::parseSanitizerXml(std::string_view(xml.constData(), size_t(xml.size())), tool, file);
    if (!parsed)
        qFatal("%s", parsed.error().message().c_str());
    SanitizerSection s;
    s.ran = true;
    s.toolVersion = "2025.3.1.0";
    s.findings = parsed->findings;
    kf::protocol::SanitizerToolRun run;
    run.tool = tool;
    run.ran = true;
    run.findings = std::int64_t(parsed->findings.size());
    s.tools.push_back(run);
    return s;
}

Diagnostic at(int line, std::string file = kCandidate.toStdString())
{
    Diagnostic d;
    d.file = std::move(file);
    d.line = line;
    d.source = "compute-sanitizer memcheck";
    d.message = "finding at line " + std::to_string(line);
    return d;
}

} // namespace

class TestSanitizerDiagnostics : public QObject {
    Q_OBJECT
private slots:
    void aFindingIsAnErrorAtItsLine();
    void aRaceMarksItsOtherAccess();
    void aFailedToolIsAnErrorWithoutALine();
    void theProblemsTableNamesTheSource();
    void findingsFollowEdits_data();
    void findingsFollowEdits();
    void aNoteGoesWithItsFinding();
};

void TestSanitizerDiagnostics::aFindingIsAnErrorAtItsLine()
{
    // memcheck on tests/gpu/sanitizer_probe/oob_read.cu: the read at line 8, then the launch
    // failure the host saw (no line: a row in Problems, no squiggle).
    const SanitizerSection s = sectionFromFixture("memcheck_oob_read.xml", "memcheck");
    const std::vector<Diagnostic> d = sanitizerDiagnostics(s, kCandidate);
    QCOMPARE(d.size(), size_t(2));
    QCOMPARE(d[0].severity, Severity::Error);
    QCOMPARE(qs(d[0].file), kCandidate); // the tool's relative path is the candidate's file
    QCOMPARE(d[0].line, 8);
    QCOMPARE(qs(d[0].source), QString("compute-sanitizer memcheck"));
    QCOMPARE(qs(d[0].code), QString("oob_read"));
    QCOMPARE(qs(d[0].message), QString("compute-sanitizer memcheck: out-of-bounds read of 4 bytes in shift_add at "
                                       "oob_read.cu:8, block (3,0,0) thread (231,0,0)"));
    QCOMPARE(d[1].line, 0);
    QVERIFY2(qs(d[1].message).contains("cudaErrorLaunchFailure"), d[1].message.c_str());
}

void TestSanitizerDiagnostics::aRaceMarksItsOtherAccess()
{
    // racecheck_smem.xml's first record: a write and a read at line 12 of smem_race.cu — one line, one error.
    SanitizerSection s = sectionFromFixture("racecheck_smem.xml", "racecheck");
    std::vector<Diagnostic> d = sanitizerDiagnostics(s, QStringLiteral("/work/task/smem_race.cu"));
    QCOMPARE(d.size(), s.findings.size());
    QCOMPARE(d[0].line, 12);
    QVERIFY2(qs(d[0].message).contains("(write at line 12 / read at line 12)"), d[0].message.c_str());
    QVERIFY2(qs(d[0].message).endsWith(QStringLiteral("(reported %1 times)").arg(s.findings[0].count)), d[0].message.c_str());

    // The pair on two lines: the error at the first access, a note at the other, with who did it.
    SanitizerFinding f = s.findings[0];
    f.count = 1;
    f.where.line = 9;
    f.other->line = 12;
    f.other->block = std::array<std::int64_t, 3>{8, 0, 0};
    f.other->thread = std::array<std::int64_t, 3>{16, 0, 0};
    s.findings = {f};
    d = sanitizerDiagnostics(s, QStringLiteral("/work/task/smem_race.cu"));
    QCOMPARE(d.size(), size_t(2));
    QCOMPARE(d[0].line, 9);
    QCOMPARE(d[0].severity, Severity::Error);
    QVERIFY2(qs(d[0].message).contains("(write at line 9 / read at line 12)"), d[0].message.c_str());
    QCOMPARE(d[1].line, 12);
    QCOMPARE(d[1].severity, Severity::Note);
    QCOMPARE(qs(d[1].message), QString("compute-sanitizer racecheck: the other access of the race at line 9: read, "
                                       "block (8,0,0) thread (16,0,0)"));
}

void TestSanitizerDiagnostics::aFailedToolIsAnErrorWithoutALine()
{
    SanitizerSection s;
    s.ran = true;
    kf::protocol::SanitizerToolRun t;
    t.tool = "initcheck";
    t.error = "did not finish within 120 s";
    s.tools = {t};
    const std::vector<Diagnostic> d = sanitizerDiagnostics(s, kCandidate);
    QCOMPARE(d.size(), size_t(1));
    QCOMPARE(d[0].line, 0);
    QCOMPARE(d[0].severity, Severity::Error);
    QCOMPARE(qs(d[0].message), QString("compute-sanitizer initcheck: did not finish within 120 s"));
    // A clean section has none.
    s.tools[0].error.clear();
    s.tools[0].ran = true;
    QVERIFY(sanitizerDiagnostics(s, kCandidate).empty());
}

void TestSanitizerDiagnostics::theProblemsTableNamesTheSource()
{
    Diagnostic nvrtc;
    nvrtc.file = kCandidate.toStdString();
    nvrtc.line = 3;
    nvrtc.message = "identifier \"b\" is undefined";
    std::vector<Diagnostic> all = sanitizerDiagnostics(sectionFromFixture("memcheck_oob_read.xml", "memcheck"), kCandidate);
    all.insert(all.begin(), nvrtc);
    DiagnosticsModel model;
    model.setDiagnostics(all);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.headerData(DiagnosticsModel::Source, Qt::Horizontal).toString(), QString("Source"));
    QCOMPARE(model.index(0, DiagnosticsModel::Source).data().toString(), QString("NVRTC"));
    QCOMPARE(model.index(1, DiagnosticsModel::Source).data().toString(), QString("compute-sanitizer memcheck"));
    QCOMPARE(model.index(1, DiagnosticsModel::Line).data().toInt(), 8);
    // The file's name in its column, its path in the tooltip.
    QCOMPARE(model.index(1, DiagnosticsModel::File).data().toString(), QString("oob_read.cu"));
    QCOMPARE(model.index(1, DiagnosticsModel::File).data(Qt::ToolTipRole).toString(), kCandidate);
    QCOMPARE(model.index(1, DiagnosticsModel::Code).data().toString(), QString("oob_read"));
    QVERIFY(model.index(1, DiagnosticsModel::Message).data().toString().startsWith("compute-sanitizer memcheck: out-of-bounds read"));
    QVERIFY(model.index(1, DiagnosticsModel::Message).data(Qt::ToolTipRole).toString().contains("Reported by compute-sanitizer memcheck."));
    QCOMPARE(model.count(Severity::Error), 3);
}

void TestSanitizerDiagnostics::findingsFollowEdits_data()
{
    QTest::addColumn<QString>("now");
    QTest::addColumn<QList<int>>("lines"); // where the findings at lines 2 and 4 of the verified text are now; 0: gone
    const QString verified = QStringLiteral("a\nb\nc\nd\ne\n");
    QTest::newRow("unchanged") << verified << QList<int>{2, 4};
    QTest::newRow("a line inserted above both") << QStringLiteral("x\na\nb\nc\nd\ne\n") << QList<int>{3, 5};
    QTest::newRow("a line deleted between") << QStringLiteral("a\nb\nd\ne\n") << QList<int>{2, 3};
    QTest::newRow("a finding's own line edited") << QStringLiteral("a\nb2\nc\nd\ne\n") << QList<int>{0, 4};
    QTest::newRow("a finding's line deleted") << QStringLiteral("a\nb\nc\ne\n") << QList<int>{2, 0};
    QTest::newRow("edits above and below") << QStringLiteral("a0\nb\nc\nd\ne0\nf\n") << QList<int>{2, 4};
    QTest::newRow("code moved down by two lines") << QStringLiteral("a\n// why\n// and how\nb\nc\nd\ne\n") << QList<int>{4, 6};
    QTest::newRow("everything rewritten") << QStringLiteral("z\ny\n") << QList<int>{0, 0};
    QTest::newRow("CRLF line ends") << QStringLiteral("a\r\nb\r\nc\r\nd\r\ne\r\n") << QList<int>{2, 4};
}

void TestSanitizerDiagnostics::findingsFollowEdits()
{
    QFETCH(QString, now);
    QFETCH(QList<int>, lines);
    const QString verified = QStringLiteral("a\nb\nc\nd\ne\n");
    Diagnostic lineless = at(0);
    const std::vector<Diagnostic> d = {at(2), at(4), lineless, at(3, "/work/task/prelude.cuh")};
    const std::vector<Diagnostic> out = followEdits(d, kCandidate, verified, now);
    QList<int> got;
    for (const Diagnostic& x : out)
        if (qs(x.file) == kCandidate && x.line > 0)
            got << x.line;
    QList<int> expected;
    for (int l : lines)
        if (l > 0)
            expected << l;
    QCOMPARE(got, expected);
    // A finding without a line, and one in another file, stay as they were.
    QVERIFY(std::any_of(out.begin(), out.end(), [](const Diagnostic& x) { return x.line == 0; }));
    QVERIFY(std::any_of(out.begin(), out.end(), [](const Diagnostic& x) { return x.file == "/work/task/prelude.cuh" && x.line == 3; }));
}

void TestSanitizerDiagnostics::aNoteGoesWithItsFinding()
{
    // A race's error at line 2 and its note at line 4: editing line 2 drops both; editing line 4
    // drops the note only.
    const QString verified = QStringLiteral("a\nb\nc\nd\ne\n");
    Diagnostic note = at(4);
    note.severity = Severity::Note;
    const std::vector<Diagnostic> d = {at(2), note, at(5)};
    std::vector<Diagnostic> out = followEdits(d, kCandidate, verified, QStringLiteral("a\nb2\nc\nd\ne\n"));
    QCOMPARE(out.size(), size_t(1));
    QCOMPARE(out[0].line, 5);
    out = followEdits(d, kCandidate, verified, QStringLiteral("a\nb\nc\nd2\ne\n"));
    QCOMPARE(out.size(), size_t(2));
    QCOMPARE(out[0].line, 2);
    QCOMPARE(out[1].line, 5);
}

QTEST_MAIN(TestSanitizerDiagnostics)
#include "tst_sanitizerdiagnostics.moc"
