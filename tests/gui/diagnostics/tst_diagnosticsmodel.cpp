// DiagnosticsModel and DiagnosticsPanel: the table a user scans after a failed build — numeric
// sorting, severity ranking, summary text, filters, and jumping to a row's position.
#include "engine/compile/Compiler.h"
#include "testutil.h"
#include "widgets/diagnostics/DiagnosticsModel.h"
#include "widgets/diagnostics/DiagnosticsPanel.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QHeaderView>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

using kf::Diagnostic;
using kf::ui::DiagnosticsModel;
using kf::ui::DiagnosticsPanel;
using Severity = kf::Diagnostic::Severity;

namespace {

Diagnostic diag(Severity s, int line, int column, std::string message, std::string code = {})
{
    Diagnostic d;
    d.file = "kernel.cu";
    d.line = line;
    d.column = column;
    d.severity = s;
    d.code = std::move(code);
    d.message = std::move(message);
    return d;
}

std::vector<Diagnostic> mixed()
{
    return {diag(Severity::Warning, 10, 3, "variable \"a\" was declared but never referenced", "177-D"),
            diag(Severity::Error, 9, 14, "identifier \"b\" is undefined", "20"),
            diag(Severity::Note, 2, 1, "declared here"),
            diag(Severity::Remark, 100, 5, "loop was not unrolled"),
            diag(Severity::Error, 10, 1, "expected a \";\"")};
}

QList<int> columnValues(const QAbstractItemModel& m, int column)
{
    QList<int> values;
    for (int r = 0; r < m.rowCount(); ++r)
        values << m.data(m.index(r, column), DiagnosticsModel::SortRole).toInt();
    return values;
}

} // namespace

class TestDiagnosticsModel : public QObject {
    Q_OBJECT

private slots:
    void modelIsConsistent();
    void displaysEachField();
    void tooltipCarriesMessageAndSource();
    void positionlessDiagnosticsShowBlankLineAndColumn();
    void fileIsRelativeToTheWorkspace_data();
    void fileIsRelativeToTheWorkspace();
    void longMessageWrapsWithoutSidewaysScroll();
    void sortByLineIsNumeric();
    void sortBySeverityRanksErrorsFirst();
    void summaryCountsSeverities_data();
    void summaryCountsSeverities();
    void summaryOfRealNvrtcBuild();
    void filterHidesSeverities();
    void clickingARowActivatesIt_data();
    void clickingARowActivatesIt();
    void enterActivatesTheCurrentRow();
    void screenshot();
};

void TestDiagnosticsModel::modelIsConsistent()
{
    DiagnosticsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setDiagnostics(mixed());
    QCOMPARE(model.rowCount(), 5);
    QCOMPARE(model.columnCount(), int(DiagnosticsModel::ColumnCount));
    model.setDiagnostics({});
    QCOMPARE(model.rowCount(), 0);
    model.setDiagnostics(mixed());

    DiagnosticsPanel panel;
    QAbstractItemModelTester proxyTester(panel.proxy(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    panel.setDiagnostics(mixed());
    panel.setSeverityVisible(Severity::Error, false);
    panel.view()->sortByColumn(DiagnosticsModel::Message, Qt::DescendingOrder);
    panel.setDiagnostics({});
}

void TestDiagnosticsModel::displaysEachField()
{
    DiagnosticsModel model;
    model.setDiagnostics(mixed());
    auto cell = [&](int row, int column) { return model.data(model.index(row, column)).toString(); };
    QCOMPARE(cell(0, DiagnosticsModel::Severity), QString("warning"));
    QCOMPARE(cell(0, DiagnosticsModel::File), QString("kernel.cu"));
    QCOMPARE(cell(0, DiagnosticsModel::Line), QString("10"));
    QCOMPARE(cell(0, DiagnosticsModel::ColumnNumber), QString("3"));
    QCOMPARE(cell(0, DiagnosticsModel::Code), QString("177-D"));
    QCOMPARE(cell(0, DiagnosticsModel::Message), QString("variable \"a\" was declared but never referenced"));
    QVERIFY(!model.data(model.index(0, DiagnosticsModel::Severity), Qt::DecorationRole).value<QIcon>().isNull());
    QCOMPARE(model.headerData(DiagnosticsModel::ColumnNumber, Qt::Horizontal).toString(), QString("Col"));
    QCOMPARE(model.diagnosticAt(1).message, std::string("identifier \"b\" is undefined"));
}

void TestDiagnosticsModel::tooltipCarriesMessageAndSource()
{
    Diagnostic d = diag(Severity::Error, 4, 13, "identifier \"bogus\" is undefined\nwith a second line", "20");
    d.sourceLine = "\t\tout[0] = \tbogus < 1;";
    DiagnosticsModel model;
    model.setDiagnostics({d});
    // The table shows all of it (the panel wraps it); the tooltip too, with the echoed source.
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::Message)).toString(),
             QString("identifier \"bogus\" is undefined\nwith a second line"));
    const QString tip = model.data(model.index(0, DiagnosticsModel::Code), Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains("identifier &quot;bogus&quot; is undefined"), qPrintable(tip));
    QVERIFY2(tip.contains("with a second line"), qPrintable(tip));
    QVERIFY2(tip.contains("\t\tout[0] = \tbogus &lt; 1;"), qPrintable(tip));
    QVERIFY2(tip.contains("\t\t         \t^"), qPrintable(tip));
}

void TestDiagnosticsModel::fileIsRelativeToTheWorkspace_data()
{
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("shown");
    QTest::newRow("in a task") << "/home/u/ws" << "/home/u/ws/vector_add/optimized.cu" << "vector_add/optimized.cu";
    QTest::newRow("base with a slash") << "/home/u/ws/" << "/home/u/ws/t/k.cu" << "t/k.cu";
    QTest::newRow("unclean path") << "/home/u/ws" << "/home/u/ws/t/../t/k.cu" << "t/k.cu";
    QTest::newRow("outside: name only") << "/home/u/ws" << "/usr/local/cuda/include/cuda_fp16.h" << "cuda_fp16.h";
    QTest::newRow("sibling prefix is outside") << "/home/u/ws" << "/home/u/ws2/k.cu" << "k.cu";
    QTest::newRow("no workspace: name") << "" << "/home/u/ws/t/k.cu" << "k.cu";
    QTest::newRow("relative stays a name") << "/home/u/ws" << "kernel.cu" << "kernel.cu";
    QTest::newRow("ptxas") << "/home/u/ws" << "ptxas" << "ptxas";
}

void TestDiagnosticsModel::fileIsRelativeToTheWorkspace()
{
    QFETCH(QString, base);
    QFETCH(QString, file);
    QFETCH(QString, shown);
    DiagnosticsModel model;
    model.setBaseDirectory(base);
    Diagnostic d = diag(Severity::Error, 3, 1, "expected a \";\"");
    d.file = file.toStdString();
    model.setDiagnostics({d});
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::File)).toString(), shown);
    // The full path is one hover away.
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::File), Qt::ToolTipRole).toString(), QDir::toNativeSeparators(file));
}

void TestDiagnosticsModel::longMessageWrapsWithoutSidewaysScroll()
{
    DiagnosticsPanel panel;
    panel.resize(620, 300); // narrower than the bottom panels of a first start on 1280×800
    panel.setBaseDirectory("/home/u/ws");
    Diagnostic d = diag(Severity::Error, 12, 9,
                        "no instance of overloaded function \"atomicAdd\" matches the argument list; argument types "
                        "are: (const float *, float); the first argument must point to writable global or shared memory");
    d.file = "/home/u/ws/softmax_fp32/optimized.cu";
    panel.setDiagnostics({d, diag(Severity::Warning, 2, 1, "short")});
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTableView* view = panel.view();
    // The message column ends inside the viewport: nothing to scroll sideways for.
    const int messageRight = view->horizontalHeader()->sectionViewportPosition(DiagnosticsModel::Message) +
                             view->horizontalHeader()->sectionSize(DiagnosticsModel::Message);
    QString sizes;
    for (int c = 0; c < DiagnosticsModel::ColumnCount; ++c)
        sizes += QString::number(view->horizontalHeader()->sectionSize(c)) + " ";
    QVERIFY2(messageRight <= view->viewport()->width() + 1,
             qPrintable(QString("message ends at %1 of %2; sections %3").arg(messageRight).arg(view->viewport()->width()).arg(sizes)));
    QVERIFY(!view->horizontalScrollBar()->isVisible());
    // The long row is taller than the short one: it wrapped rather than being cut off.
    const int shortRow = 0, longRow = 1; // sorted by line: 2, then 12
    QTRY_VERIFY2(view->rowHeight(longRow) > view->rowHeight(shortRow) * 3 / 2,
                 qPrintable(QString("%1 vs %2").arg(view->rowHeight(longRow)).arg(view->rowHeight(shortRow))));
}

void TestDiagnosticsModel::positionlessDiagnosticsShowBlankLineAndColumn()
{
    DiagnosticsModel model;
    Diagnostic d = diag(Severity::Warning, 0, 0, "Registers are spilled to local memory");
    d.file = "ptxas";
    model.setDiagnostics({d});
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::Line)).toString(), QString());
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::ColumnNumber)).toString(), QString());
    QCOMPARE(model.data(model.index(0, DiagnosticsModel::Line), DiagnosticsModel::SortRole).toInt(), 0);
}

void TestDiagnosticsModel::sortByLineIsNumeric()
{
    DiagnosticsPanel panel;
    panel.setDiagnostics(mixed());
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    // Default: by line, ascending — 9 before 10 before 100, which text order would not give.
    QCOMPARE(columnValues(*panel.proxy(), DiagnosticsModel::Line), (QList<int>{2, 9, 10, 10, 100}));

    // Clicking the Line header flips to descending.
    auto* header = panel.view()->horizontalHeader();
    const QPoint lineHeader(header->sectionViewportPosition(DiagnosticsModel::Line) +
                                header->sectionSize(DiagnosticsModel::Line) / 2,
                            header->height() / 2);
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, lineHeader);
    QCOMPARE(columnValues(*panel.proxy(), DiagnosticsModel::Line), (QList<int>{100, 10, 10, 9, 2}));

    // Column numbers sort numerically too.
    const QPoint columnHeader(header->sectionViewportPosition(DiagnosticsModel::ColumnNumber) +
                                  header->sectionSize(DiagnosticsModel::ColumnNumber) / 2,
                              header->height() / 2);
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, columnHeader);
    QList<int> columns = columnValues(*panel.proxy(), DiagnosticsModel::ColumnNumber);
    QVERIFY(columns == (QList<int>{1, 1, 3, 5, 14}) || columns == (QList<int>{14, 5, 3, 1, 1}));
}

void TestDiagnosticsModel::sortBySeverityRanksErrorsFirst()
{
    DiagnosticsPanel panel;
    panel.setDiagnostics(mixed());
    panel.view()->sortByColumn(DiagnosticsModel::Severity, Qt::AscendingOrder);
    QStringList order;
    for (int r = 0; r < panel.proxy()->rowCount(); ++r)
        order << panel.proxy()->index(r, DiagnosticsModel::Severity).data().toString();
    QCOMPARE(order, (QStringList{"error", "error", "warning", "remark", "note"}));
}

void TestDiagnosticsModel::summaryCountsSeverities_data()
{
    QTest::addColumn<QList<int>>("severities");
    QTest::addColumn<QString>("summary");
    QTest::newRow("clean build") << QList<int>{} << "No problems";
    QTest::newRow("two errors and a warning")
        << QList<int>{int(Severity::Error), int(Severity::Warning), int(Severity::Error)} << "2 errors, 1 warning";
    QTest::newRow("one warning") << QList<int>{int(Severity::Warning)} << "1 warning";
    QTest::newRow("remarks and a note")
        << QList<int>{int(Severity::Remark), int(Severity::Note), int(Severity::Remark)} << "2 remarks, 1 note";
}

void TestDiagnosticsModel::summaryCountsSeverities()
{
    QFETCH(QList<int>, severities);
    QFETCH(QString, summary);
    std::vector<Diagnostic> ds;
    for (int s : severities)
        ds.push_back(diag(static_cast<Severity>(s), 1, 1, "m"));
    DiagnosticsPanel panel;
    panel.setDiagnostics(mixed());
    panel.setDiagnostics(ds);
    QCOMPARE(panel.summary(), summary);
}

void TestDiagnosticsModel::summaryOfRealNvrtcBuild()
{
    if (auto v = kf::nvrtcVersion(); !v.ok())
        QSKIP(qPrintable("no NVRTC: " + qs(v.error().message())));
    kf::CompileRequest request;
    request.source = "__global__ void k(float* out)\n{\n    float x = 1.0f\n    out[0] = x;\n}\n";
    request.options.arch = "sm_90";
    request.wantSass = false;
    auto result = kf::compile(request);
    KF_VERIFY_OK(result);
    DiagnosticsPanel panel;
    QSignalSpy spy(&panel, &DiagnosticsPanel::diagnosticActivated);
    panel.setDiagnostics(result->diagnostics);
    QCOMPARE(panel.summary(), QString("1 error, 1 warning"));
    // Sorted by line: the warning on line 3 comes before the error on line 4.
    QCOMPARE(panel.proxy()->index(0, DiagnosticsModel::Severity).data().toString(), QString("warning"));
    QCOMPARE(panel.proxy()->index(1, DiagnosticsModel::Line).data().toInt(), 4);
    QCOMPARE(panel.proxy()->index(1, DiagnosticsModel::ColumnNumber).data().toInt(), 5);
}

void TestDiagnosticsModel::filterHidesSeverities()
{
    DiagnosticsPanel panel;
    panel.setDiagnostics(mixed());
    QCOMPARE(panel.proxy()->rowCount(), 5);
    panel.setSeverityVisible(Severity::Warning, false);
    QCOMPARE(panel.proxy()->rowCount(), 4);
    panel.setSeverityVisible(Severity::Note, false);
    QCOMPARE(panel.proxy()->rowCount(), 2);
    panel.setSeverityVisible(Severity::Error, false);
    QCOMPARE(panel.proxy()->rowCount(), 0);
    panel.setSeverityVisible(Severity::Error, true);
    QCOMPARE(panel.proxy()->rowCount(), 2);
    // The summary always counts everything, filtered or not.
    QCOMPARE(panel.summary(), QString("2 errors, 1 warning, 1 remark, 1 note"));
}

void TestDiagnosticsModel::clickingARowActivatesIt_data()
{
    QTest::addColumn<int>("proxyRow");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    // Sorted by line: (2,1) (9,14) (10,3) (10,1) (100,5).
    QTest::newRow("first row") << 0 << 2 << 1;
    QTest::newRow("error at 9:14") << 1 << 9 << 14;
    QTest::newRow("last row") << 4 << 100 << 5;
}

void TestDiagnosticsModel::clickingARowActivatesIt()
{
    QFETCH(int, proxyRow);
    QFETCH(int, line);
    QFETCH(int, column);
    DiagnosticsPanel panel;
    panel.resize(700, 300);
    panel.setDiagnostics(mixed());
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy spy(&panel, &DiagnosticsPanel::diagnosticActivated);
    const QRect rect = panel.view()->visualRect(panel.proxy()->index(proxyRow, DiagnosticsModel::Message));
    QVERIFY(rect.isValid());
    QTest::mouseClick(panel.view()->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toString(), QString("kernel.cu"));
    QCOMPARE(spy.at(0).at(1).toInt(), line);
    QCOMPARE(spy.at(0).at(2).toInt(), column);
}

void TestDiagnosticsModel::enterActivatesTheCurrentRow()
{
    DiagnosticsPanel panel;
    panel.setDiagnostics(mixed());
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy spy(&panel, &DiagnosticsPanel::diagnosticActivated);
    panel.view()->setCurrentIndex(panel.proxy()->index(2, 0)); // line 10, column 3 (first of the two)
    QTest::keyClick(panel.view(), Qt::Key_Return);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(1).toInt(), 10);
    QCOMPARE(spy.at(0).at(2).toInt(), 3);
}

void TestDiagnosticsModel::screenshot()
{
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty())
        QSKIP("set KF_SCREENSHOT_DIR to save a panel screenshot");
    DiagnosticsPanel panel;
    panel.resize(760, 220);
    panel.setDiagnostics(mixed());
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(panel.grab().save(QDir(dir).filePath("diagnostics-panel.png")));
}

QTEST_MAIN(TestDiagnosticsModel)
#include "tst_diagnosticsmodel.moc"
