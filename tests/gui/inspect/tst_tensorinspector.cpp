// The failing-input inspector as a user drives it: the planted wrong elements are marked where
// they are and nowhere else, at any zoom; the three panes move together; F8 walks the mismatches
// in index order across slices; a broken case is a message, not a crash.
#include "casefixture.h"
#include "inspecthelpers.h"
#include "testutil.h"

#include "widgets/inspect/ColorLegend.h"
#include "widgets/inspect/ElementCode.h"
#include "widgets/inspect/ErrorHistogramView.h"
#include "widgets/inspect/MismatchListModel.h"
#include "widgets/inspect/SliceControls.h"
#include "widgets/inspect/TensorCanvas.h"
#include "widgets/inspect/TensorInspector.h"
#include "widgets/inspect/TensorViewport.h"
#include "widgets/inspect/TileRenderer.h"

#include <QApplication>
#include <QFile>
#include <QLabel>
#include <QPalette>
#include <QPushButton>
#include <QTableView>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QWheelEvent>

#include <cmath>

using kf::ui::DiffMode;
using kf::ui::TensorCanvas;
using kf::ui::TensorInspector;

namespace {

using namespace inspecttest;

enum class Mark { None, Outside, NonFinite, Unwritten };

Mark plantedMark(std::int64_t r, std::int64_t c)
{
    if (r == 3 && c == 5)
        return Mark::Outside;
    if ((r == 10 && c == 7) || (r == 11 && c == 2))
        return Mark::NonFinite;
    if (r == 20 && c == 30)
        return Mark::Unwritten;
    return Mark::None;
}

} // namespace

class TestTensorInspector : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void markingsAtEightPixelsPerCell_data();
    void markingsAtEightPixelsPerCell();
    void markingsSurviveZoomingOut_data();
    void markingsSurviveZoomingOut();
    void threeDimensionalSlices();
    void hoverShowsTheElement_data();
    void hoverShowsTheElement();
    void wheelAndDragMoveAllPanes();
    void wrapWidthOfAVectorIsEditable();
    void modeSwitchChangesTheLegend();
    void legendNoteClearsTheSwatches_data();
    void legendNoteClearsTheSwatches();
    void stripsShowRowAndColumnMaxima();
    void nextAndPreviousVisitMismatchesInOrder_data();
    void nextAndPreviousVisitMismatchesInOrder();
    void mismatchListActivationMovesTheView();
    void inputTensorShowsOnePane();
    void histogramCountsTheClasses();
    void countsThatDisagreeWithTheReportWarn();
    void buttonsOnlyEmitSignals();
    void brokenCasesGiveAMessage_data();
    void brokenCasesGiveAMessage();

private:
    QTemporaryDir m_tmp;
    QString m_plain, m_cube, m_vector, m_tampered;
};

void TestTensorInspector::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_plain = m_tmp.filePath(QStringLiteral("00-tail-48x64-t1"));
    KF_VERIFY_OK(fixture::plantedCase().write(m_plain));

    fixture::CaseBuilder cube({4, 24, 32});
    cube.nanActual({0, 20, 3});
    cube.outside({2, 5, 7});
    cube.unwritten({3, 1, 1});
    m_cube = m_tmp.filePath(QStringLiteral("01-cube"));
    KF_VERIFY_OK(cube.write(m_cube));

    fixture::CaseBuilder vec({3000});
    vec.outside({2500});
    vec.outside({17});
    m_vector = m_tmp.filePath(QStringLiteral("02-vector"));
    KF_VERIFY_OK(vec.write(m_vector));

    m_tampered = m_tmp.filePath(QStringLiteral("03-tampered"));
    KF_VERIFY_OK(fixture::plantedCase().write(m_tampered, [](nlohmann::json& check) {
        check["mismatches"] = 5;
        check["unwritten"] = 2;
    }));
}

void TestTensorInspector::markingsAtEightPixelsPerCell_data()
{
    QTest::addColumn<int>("zoomStep");
    QTest::newRow("8 px per cell") << 6;
    QTest::newRow("16 px per cell") << 8;
    QTest::newRow("11.3 px per cell (between levels)") << 7;
}

void TestTensorInspector::markingsAtEightPixelsPerCell()
{
    QFETCH(int, zoomStep);
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    auto* view = w.viewport();
    TensorCanvas* diff = w.pane(Pane::Difference);
    const int s = static_cast<int>(std::floor(std::exp2(zoomStep / 2.0)));
    QSet<std::int64_t> planted;
    // Views on each planted element and on two quarters of the slice.
    for (const QPointF centre : {QPointF(5.5, 3.5), QPointF(7.5, 10.5), QPointF(2.5, 11.5), QPointF(30.5, 20.5),
                                 QPointF(16, 12), QPointF(48, 36)}) {
        view->setZoomStep(zoomStep);
        view->setCentre(centre);
        QVERIFY(settled(w));
        const QImage img = grabPane(w, Pane::Difference);
        const QRect area = diff->imageRect().adjusted(s, s, -s, -s);
        for (std::int64_t r = 0; r < 48; ++r) {
            for (std::int64_t c = 0; c < 64; ++c) {
                const QPoint mid = diff->cellCentre(r, c);
                const QRectF exact = diff->cellRect(r, c);
                // The pixels wholly inside the cell.
                const QRect cell(QPoint(static_cast<int>(std::ceil(exact.left())), static_cast<int>(std::ceil(exact.top()))),
                                 QPoint(static_cast<int>(std::floor(exact.right())) - 1, static_cast<int>(std::floor(exact.bottom())) - 1));
                if (!area.contains(cell))
                    continue;
                const Mark m = plantedMark(r, c);
                const QByteArray where = QStringLiteral("cell (%1, %2)").arg(r).arg(c).toUtf8();
                if (m == Mark::None) {
                    for (int y = cell.top() + 1; y < cell.bottom(); ++y)
                        for (int x = cell.left() + 1; x < cell.right(); ++x)
                            QVERIFY2(!isMarked(img.pixel(x, y)), where.constData());
                    continue;
                }
                planted.insert(r * 64 + c);
                if (m == Mark::Outside) {
                    QVERIFY2(isRed(img.pixel(mid)), where.constData());
                    // The white outline along the top and left edges.
                    QCOMPARE(img.pixel(mid.x(), cell.top()) & 0xffffff, 0xffffffu);
                    QCOMPARE(img.pixel(cell.left(), mid.y()) & 0xffffff, 0xffffffu);
                    QCOMPARE(img.pixel(mid.x(), cell.bottom()) & 0xffffff, 0xffffffu);
                } else if (m == Mark::NonFinite) {
                    QVERIFY2(isMagenta(img.pixel(mid.x(), cell.top() + 1)), where.constData());
                    QVERIFY2(qRed(img.pixel(mid)) < 160, where.constData());  // the ×
                } else {
                    int yellow = 0, black = 0;
                    for (int y = cell.top(); y <= cell.bottom(); ++y)
                        for (int x = cell.left(); x <= cell.right(); ++x) {
                            yellow += (img.pixel(x, y) & 0xffffff) == 0xffcd00;
                            black += (img.pixel(x, y) & 0xffffff) == 0;
                        }
                    QVERIFY2(yellow > s && black > s, where.constData());
                }
            }
        }
    }
    QCOMPARE(planted.size(), 4);  // every planted element was inspected
}

void TestTensorInspector::markingsSurviveZoomingOut_data()
{
    QTest::addColumn<int>("zoomStep");
    QTest::addColumn<int>("mode");
    QTest::newRow("0.71 px per cell, ratio") << -1 << static_cast<int>(DiffMode::Ratio);
    QTest::newRow("0.35 px per cell, ratio") << -3 << static_cast<int>(DiffMode::Ratio);
    QTest::newRow("0.25 px per cell, |error|") << -4 << static_cast<int>(DiffMode::AbsError);
}

void TestTensorInspector::markingsSurviveZoomingOut()
{
    QFETCH(int, zoomStep);
    QFETCH(int, mode);
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    w.setDiffMode(static_cast<DiffMode>(mode));
    w.viewport()->setZoomStep(zoomStep);
    w.viewport()->setCentre(QPointF(32, 24));
    QVERIFY(settled(w));
    const QImage img = grabPane(w, Pane::Difference);
    TensorCanvas* diff = w.pane(Pane::Difference);
    struct Spot {
        std::int64_t r, c;
        bool (*test)(QRgb);
    };
    const Spot spots[] = {{3, 5, isRed}, {10, 7, isMagenta}, {11, 2, isMagenta}, {20, 30, isHazard}};
    for (const Spot& s : spots) {
        const QPoint p = diff->cellCentre(s.r, s.c);
        bool found = false;
        for (int dy = -1; dy <= 1 && !found; ++dy)
            for (int dx = -1; dx <= 1 && !found; ++dx)
                found = s.test(img.pixel(p.x() + dx, p.y() + dy));
        QVERIFY2(found, qPrintable(QStringLiteral("mark of (%1, %2) lost at zoom step %3").arg(s.r).arg(s.c).arg(zoomStep)));
    }
    // Nothing else is marked: every marked pixel is next to a planted element.
    const QRect area = diff->imageRect();
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x) {
            if (!isMarked(img.pixel(x, y)))
                continue;
            bool near = false;
            for (const Spot& s : spots)
                near = near || (diff->cellCentre(s.r, s.c) - QPoint(x, y)).manhattanLength() <= 4;
            QVERIFY2(near, qPrintable(QStringLiteral("stray mark at pixel (%1, %2)").arg(x).arg(y)));
        }
}

void TestTensorInspector::threeDimensionalSlices()
{
    TensorInspector w;
    QVERIFY(open(w, m_cube));
    QCOMPARE(w.viewport()->slice().rows(), 24);
    QCOMPARE(w.viewport()->slice().cols(), 32);
    QSpinBox* spin = w.sliceControls()->axisSpin(0);
    QVERIFY(spin);
    QCOMPARE(spin->maximum(), 3);
    w.viewport()->setZoomStep(6);
    w.viewport()->setCentre(QPointF(8, 10));
    auto markAt = [&](std::int64_t r, std::int64_t c) {
        const QImage img = grabPane(w, Pane::Difference);
        const QPoint p = w.pane(Pane::Difference)->cellCentre(r, c);
        return isMarked(img.pixel(p)) || isMagenta(img.pixel(p.x(), p.y() - 3));
    };
    // Slice 0 holds the NaN at (0, 20, 3) but not the outside element of slice 2 at (5, 7).
    QVERIFY(settled(w));
    QVERIFY(markAt(20, 3));
    QVERIFY(!markAt(5, 7));
    spin->setValue(2);
    QCOMPARE(w.viewport()->slice().fixed[0], 2);
    QVERIFY(settled(w));
    QVERIFY(markAt(5, 7));
    QVERIFY(!markAt(20, 3));
    // Stepping the fixed axis to where next() goes: (3, 1, 1) is on slice 3.
    w.goTo(fixture::CaseBuilder({4, 24, 32}).flat({3, 1, 1}));
    QCOMPARE(spin->value(), 3);
    QVERIFY(settled(w));
    QVERIFY(markAt(1, 1));
}

void TestTensorInspector::hoverShowsTheElement_data()
{
    QTest::addColumn<QString>("which");
    QTest::addColumn<int>("row");
    QTest::addColumn<int>("col");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("outside tolerance") << "plain" << 3 << 5 << QStringList{"[3, 5]", "outside tolerance", "abs 0.5", "ratio"};
    QTest::newRow("NaN for a finite reference") << "plain" << 10 << 7 << QStringList{"[10, 7]", "cand nan", "NaN/Inf mismatch", "abs inf"};
    QTest::newRow("+Inf") << "plain" << 11 << 2 << QStringList{"[11, 2]", "cand inf", "NaN/Inf mismatch"};
    QTest::newRow("never written") << "plain" << 20 << 30 << QStringList{"[20, 30]", "cand never written", "never written"};
    QTest::newRow("NaN equals NaN") << "plain" << 1 << 1 << QStringList{"[1, 1]", "ref nan", "cand nan", " ok"};
    QTest::newRow("a good element") << "plain" << 30 << 40 << QStringList{"[30, 40]", " ok"};
    QTest::newRow("1-D wrapped: the true index") << "vector" << 2 << 452 << QStringList{"[2500]", "outside tolerance"};
}

void TestTensorInspector::hoverShowsTheElement()
{
    QFETCH(QString, which);
    QFETCH(int, row);
    QFETCH(int, col);
    QFETCH(QStringList, expected);
    TensorInspector w;
    QVERIFY(open(w, which == QLatin1String("plain") ? m_plain : m_vector));
    w.viewport()->centreOn(row, col, 8);
    for (Pane p : {Pane::Reference, Pane::Difference}) {
        TensorCanvas* canvas = w.pane(p);
        hoverAt(canvas, canvas->cellCentre(row, col));
        QTRY_COMPARE(w.viewport()->hoverRow(), row);
        QCOMPARE(w.viewport()->hoverCol(), col);
        for (const QString& e : expected)
            QVERIFY2(w.hoverText().contains(e), qPrintable(w.hoverText() + QStringLiteral(" lacks ") + e));
    }
}

void TestTensorInspector::wheelAndDragMoveAllPanes()
{
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    auto* view = w.viewport();
    view->setZoomStep(4);
    view->setCentre(QPointF(32, 24));
    TensorCanvas* ref = w.pane(Pane::Reference);
    TensorCanvas* cand = w.pane(Pane::Candidate);
    TensorCanvas* diff = w.pane(Pane::Difference);

    // Wheel on the reference pane: the cell under the cursor stays under it, and every pane zooms.
    const QPoint cursor = ref->cellCentre(10, 20);
    QWheelEvent wheel(cursor, ref->mapToGlobal(cursor), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(ref, &wheel);
    QCOMPARE(view->zoomStep(), 5);
    std::int64_t r = -1, c = -1;
    QVERIFY(ref->cellAt(cursor, &r, &c));
    QCOMPARE(r, 10);
    QCOMPARE(c, 20);
    const QPoint refBefore = ref->cellCentre(10, 20) - ref->imageRect().center();
    const QPoint candBefore = cand->cellCentre(10, 20) - cand->imageRect().center();
    const QPoint diffBefore = diff->cellCentre(10, 20) - diff->imageRect().center();
    QVERIFY((refBefore - candBefore).manhattanLength() <= 2);
    QVERIFY((refBefore - diffBefore).manhattanLength() <= 2);

    // Drag on the candidate pane: all three move by the drag.
    const QPoint from = cand->imageRect().center();
    QTest::mousePress(cand, Qt::LeftButton, Qt::NoModifier, from);
    QTest::mouseMove(cand, from + QPoint(40, 24));
    QTest::mouseRelease(cand, Qt::LeftButton, Qt::NoModifier, from + QPoint(40, 24));
    for (TensorCanvas* p : {ref, cand, diff}) {
        const QPoint moved = p->cellCentre(10, 20) - p->imageRect().center();
        const QPoint before = p == ref ? refBefore : p == cand ? candBefore : diffBefore;
        QVERIFY2((moved - before - QPoint(40, 24)).manhattanLength() <= 2,
                 qPrintable(QStringLiteral("moved by (%1, %2)").arg((moved - before).x()).arg((moved - before).y())));
    }
}

void TestTensorInspector::wrapWidthOfAVectorIsEditable()
{
    TensorInspector w;
    QVERIFY(open(w, m_vector));
    QSpinBox* wrap = w.sliceControls()->wrapSpin();
    QVERIFY(wrap);
    QCOMPARE(wrap->value(), 1024);
    QCOMPARE(w.viewport()->slice().rows(), 3);
    wrap->setValue(100);
    QCOMPARE(w.viewport()->slice().rows(), 30);
    QCOMPARE(w.viewport()->slice().cols(), 100);
    w.viewport()->centreOn(25, 0, 8);
    QVERIFY(settled(w));
    TensorCanvas* diff = w.pane(Pane::Difference);
    hoverAt(diff, diff->cellCentre(25, 0));
    QTRY_VERIFY2(w.hoverText().startsWith(QStringLiteral("[2500]")), qPrintable(w.hoverText()));
    QVERIFY(w.hoverText().contains(QStringLiteral("outside tolerance")));
    const QImage img = grabPane(w, Pane::Difference);
    QVERIFY(isRed(img.pixel(diff->cellCentre(25, 0))));
    // Past the end of the vector there are no cells: nothing is drawn or hovered there.
    QCOMPARE(w.viewport()->slice().flat(29, 99), 2999);
    w.next();
    w.next();
    QCOMPARE(w.currentFlat(), 2500);
}

void TestTensorInspector::modeSwitchChangesTheLegend()
{
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    const QString ratioTitle = w.differenceLegend()->spec().title;
    QVERIFY(ratioTitle.contains(QStringLiteral("tolerance")));
    QVERIFY(w.differenceLegend()->spec().breakAt > 0);
    const quint64 ratioSource = w.pane(Pane::Difference)->source()->id;
    w.setDiffMode(DiffMode::AbsError);
    QVERIFY(w.differenceLegend()->spec().title != ratioTitle);
    QVERIFY(w.differenceLegend()->spec().title.contains(QStringLiteral("|expected − actual|")));
    QCOMPARE(w.differenceLegend()->spec().breakAt, -1.0);
    QVERIFY(w.pane(Pane::Difference)->source()->id != ratioSource);
    QVERIFY(w.valueLegend()->spec().note.contains(QStringLiteral("sample")));
    w.setDiffMode(DiffMode::Ratio);
    QCOMPARE(w.differenceLegend()->spec().title, ratioTitle);
}

void TestTensorInspector::stripsShowRowAndColumnMaxima()
{
    namespace ec = kf::ui::elementcode;
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    TensorCanvas* diff = w.pane(Pane::Difference);
    QTRY_VERIFY(diff->summary() != nullptr);
    const auto& s = *diff->summary();
    QCOMPARE(s.rowMax.size(), size_t(48));
    QCOMPARE(s.colMax.size(), size_t(64));
    QCOMPARE(ec::classOf(s.rowMax[3]), kf::ElementClass::OutsideTolerance);
    QCOMPARE(s.rowMax[10], ec::kNonFinite);
    QCOMPARE(s.rowMax[11], ec::kNonFinite);
    QCOMPARE(s.rowMax[20], ec::kUnwritten);
    QCOMPARE(ec::classOf(s.rowMax[1]), kf::ElementClass::Ok);  // NaN == NaN
    QCOMPARE(ec::classOf(s.colMax[5]), kf::ElementClass::OutsideTolerance);
    QCOMPARE(s.colMax[7], ec::kNonFinite);
    QCOMPARE(s.colMax[2], ec::kNonFinite);
    QCOMPARE(s.colMax[30], ec::kUnwritten);
    QCOMPARE(ec::classOf(s.colMax[40]), kf::ElementClass::Ok);

    w.viewport()->centreOn(3, 5, 8);
    const QRect strip = diff->rowStripRect();
    const int y = diff->cellCentre(3, 5).y();
    const QString tip = diff->stripToolTip(QPoint(strip.center().x(), y));
    QVERIFY2(tip.startsWith(QStringLiteral("row 3: max ratio")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("outside tolerance")) && tip.contains(QStringLiteral("[3, 5]")), qPrintable(tip));
    const QString colTip = diff->stripToolTip(QPoint(diff->cellCentre(3, 5).x(), diff->columnStripRect().center().y()));
    QVERIFY2(colTip.startsWith(QStringLiteral("column 5:")), qPrintable(colTip));
    const QImage img = grabPane(w, Pane::Difference);
    QVERIFY(isRed(img.pixel(strip.center().x(), y)));
    QVERIFY(!isMarked(img.pixel(strip.center().x(), diff->cellCentre(5, 5).y())));
}

void TestTensorInspector::nextAndPreviousVisitMismatchesInOrder_data()
{
    QTest::addColumn<QString>("which");
    QTest::addColumn<QList<qint64>>("order");
    QTest::newRow("2-D") << "plain" << QList<qint64>{3 * 64 + 5, 10 * 64 + 7, 11 * 64 + 2, 20 * 64 + 30};
    QTest::newRow("3-D, across slices") << "cube" << QList<qint64>{20 * 32 + 3, 2 * 768 + 5 * 32 + 7, 3 * 768 + 32 + 1};
    QTest::newRow("1-D") << "vector" << QList<qint64>{17, 2500};
}

void TestTensorInspector::nextAndPreviousVisitMismatchesInOrder()
{
    QFETCH(QString, which);
    QFETCH(QList<qint64>, order);
    TensorInspector w;
    QVERIFY(open(w, which == QLatin1String("plain") ? m_plain : which == QLatin1String("cube") ? m_cube : m_vector));
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    w.pane(Pane::Difference)->setFocus();
    for (qint64 flat : order) {
        QTest::keyClick(&w, Qt::Key_F8);
        QCOMPARE(w.currentFlat(), flat);
        QVERIFY(!w.statusText().contains(QStringLiteral("Wrapped")));
        QVERIFY(w.viewport()->scale() >= 8);
        std::int64_t r, c;
        QVERIFY(w.viewport()->slice().locate(flat, &r, &c));  // the fixed axes followed
        QVERIFY(std::abs(w.viewport()->centre().x() - (c + 0.5)) < 1e-9);
        QVERIFY(std::abs(w.viewport()->centre().y() - (r + 0.5)) < 1e-9);
    }
    w.next();
    QCOMPARE(w.currentFlat(), order.first());
    QVERIFY2(w.statusText().startsWith(QStringLiteral("Wrapped")), qPrintable(w.statusText()));
    w.previous();
    QCOMPARE(w.currentFlat(), order.last());
    QVERIFY(w.statusText().startsWith(QStringLiteral("Wrapped")));
    for (qsizetype i = order.size() - 2; i >= 0; --i) {
        QTest::keyClick(&w, Qt::Key_F8, Qt::ShiftModifier);
        QCOMPARE(w.currentFlat(), order[i]);
    }
}

void TestTensorInspector::mismatchListActivationMovesTheView()
{
    TensorInspector w;
    QVERIFY(open(w, m_cube));
    auto* model = w.mismatchModel();
    QTRY_COMPARE(model->rowCount(), 3);
    const QModelIndex second = model->index(1, 0);
    QCOMPARE(second.data().toString(), QStringLiteral("[2, 5, 7]"));
    emit w.mismatchView()->activated(second);
    QCOMPARE(w.currentFlat(), 2 * 768 + 5 * 32 + 7);
    QCOMPARE(w.viewport()->slice().fixed[0], 2);
    QVERIFY(std::abs(w.viewport()->centre().x() - 7.5) < 1e-9);
}

void TestTensorInspector::inputTensorShowsOnePane()
{
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    QVERIFY(w.showTensor(QStringLiteral("x")));
    QTRY_VERIFY(w.isAnalysed());
    QVERIFY(w.pane(Pane::Reference)->isVisible());
    QVERIFY(!w.pane(Pane::Candidate)->isVisible());
    QVERIFY(!w.pane(Pane::Difference)->isVisible());
    QVERIFY(settled(w));
    w.viewport()->centreOn(0, 0, 8);
    TensorCanvas* ref = w.pane(Pane::Reference);
    hoverAt(ref, ref->cellCentre(0, 0));
    QTRY_VERIFY2(w.hoverText().contains(QStringLiteral("[0, 0]  value 1")), qPrintable(w.hoverText()));
    QVERIFY(w.showTensor(QStringLiteral("y")));
    QTRY_VERIFY(w.isAnalysed());
    QVERIFY(w.pane(Pane::Difference)->isVisible());
}

void TestTensorInspector::histogramCountsTheClasses()
{
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    using H = kf::ui::ErrorHistogramView;
    QCOMPARE(w.histogram()->countAt(H::kNonFiniteAt), 2);
    QCOMPARE(w.histogram()->countAt(H::kUnwrittenAt), 1);
    qint64 outside = 0, total = 0;
    for (int i = 0; i <= H::kUnwrittenAt; ++i) {
        total += w.histogram()->countAt(i);
        if (i >= H::kFirstBinAt + kf::ErrorHistogram::kBins / 2 && i <= H::kAboveAt)
            outside += w.histogram()->countAt(i);
    }
    QCOMPARE(outside, 1);
    QCOMPARE(total, 48 * 64);
    QCOMPARE(w.analysis()->mismatches(), 4);
    QVERIFY(w.warningText().isEmpty());
    QVERIFY2(w.statusText().startsWith(QStringLiteral("4 of 3072 elements fail")), qPrintable(w.statusText()));
}

void TestTensorInspector::countsThatDisagreeWithTheReportWarn()
{
    TensorInspector w;
    QVERIFY(open(w, m_tampered));
    QVERIFY2(w.warningText().contains(QStringLiteral("mismatches: report 5, files 4")), qPrintable(w.warningText()));
    QVERIFY(w.warningText().contains(QStringLiteral("unwritten: report 2, files 1")));
}

void TestTensorInspector::buttonsOnlyEmitSignals()
{
    TensorInspector w;
    QVERIFY(open(w, m_plain));
    QSignalSpy exportSpy(&w, &TensorInspector::exportReproRequested);
    QSignalSpy shrinkSpy(&w, &TensorInspector::shrinkRequested);
    QSignalSpy rerunSpy(&w, &TensorInspector::rerunRequested);
    for (QPushButton* b : w.findChildren<QPushButton*>()) {
        if (b->text().startsWith(QStringLiteral("Export")) || b->text().startsWith(QStringLiteral("Shrink")) ||
            b->text().startsWith(QStringLiteral("Re-run")))
            QTest::mouseClick(b, Qt::LeftButton);
    }
    QCOMPARE(exportSpy.count(), 1);
    QCOMPARE(shrinkSpy.count(), 1);
    QCOMPARE(rerunSpy.count(), 1);
    QCOMPARE(exportSpy.first().first().toString(), m_plain);
    QCOMPARE(rerunSpy.first().first().toString(), m_plain);
}

void TestTensorInspector::brokenCasesGiveAMessage_data()
{
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("named");
    QTest::newRow("no case folder") << "no-folder" << "case.json";
    QTest::newRow("reference file missing") << "rm expected/y.npy" << "expected/y.npy";
    QTest::newRow("candidate file truncated") << "truncate actual/y.npy" << "actual/y.npy";
    QTest::newRow("input file is not .npy") << "garbage inputs/x.npy" << "inputs/x.npy";
    QTest::newRow("case.json is not JSON") << "garbage case.json" << "case.json";
    QTest::newRow("output not in the case") << "output z" << "'z'";
}

void TestTensorInspector::brokenCasesGiveAMessage()
{
    QFETCH(QString, damage);
    QFETCH(QString, named);
    QTemporaryDir tmp;
    const QString dir = tmp.filePath(QStringLiteral("case"));
    KF_VERIFY_OK(fixture::plantedCase().write(dir));
    const QString file = dir + QLatin1Char('/') + damage.section(QLatin1Char(' '), 1);
    QString output;
    if (damage == QLatin1String("no-folder"))
        QVERIFY(QDir(dir).removeRecursively());
    else if (damage.startsWith(QLatin1String("rm ")))
        QVERIFY(QFile::remove(file));
    else if (damage.startsWith(QLatin1String("truncate "))) {
        QFile f(file);
        QVERIFY(f.resize(200));
    } else if (damage.startsWith(QLatin1String("garbage "))) {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("this is not what the runner wrote\n");
    } else if (damage.startsWith(QLatin1String("output ")))
        output = damage.section(QLatin1Char(' '), 1);
    TensorInspector w;
    w.show();
    QVERIFY(!w.openCase(dir, output));
    QVERIFY2(w.errorString().contains(named), qPrintable(w.errorString()));
    QVERIFY(!w.isAnalysed());
    auto* label = w.findChild<QLabel*>(QStringLiteral("inspectorError"));
    QVERIFY(label && label->isVisible());
    QVERIFY(label->text().contains(named));
    // Stepping and zooming on a broken case does nothing rather than crash.
    w.next();
    w.previous();
    w.fitView();
    // And a good case opens in the same widget afterwards.
    QVERIFY(w.openCase(m_plain));
    QTRY_VERIFY(w.isAnalysed());
    QVERIFY(w.errorString().isEmpty());
}

// The value legend's four swatches stack in one column when the legend is narrow: it grows so its
// note ("Zoomed out, …") sits under the last of them instead of across it (issue 20's screenshots).
void TestTensorInspector::legendNoteClearsTheSwatches_data()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("rows");   // swatch rows at that width
    QTest::newRow("narrow: one column") << 360 << 4;
    QTest::newRow("wide: one row") << 1600 << 1;
}

void TestTensorInspector::legendNoteClearsTheSwatches()
{
    QFETCH(int, width);
    QFETCH(int, rows);
    kf::ui::ColorLegend legend;
    legend.setSpec(kf::ui::LegendSpec::values(0.0, 1.0, true));
    QCOMPARE(legend.spec().swatches.size(), 4);
    QVERIFY(!legend.spec().note.isEmpty());
    const int h = legend.fontMetrics().height();
    // Title, the swatch rows (h + 4 apart, 14 px boxes), then the note's line.
    const int needed = (h + 1) + (rows - 1) * (h + 4) + std::max(14, h) + 4 + h;
    QVERIFY2(legend.heightForWidth(width) >= needed,
             qPrintable(QStringLiteral("%1 < %2").arg(legend.heightForWidth(width)).arg(needed)));
    QVERIFY(legend.heightForWidth(360) > legend.heightForWidth(1600));   // it grows only when it must
    legend.resize(width, legend.heightForWidth(width));
    QVERIFY(!legend.grab().isNull());
}

QTEST_MAIN(TestTensorInspector)
#include "tst_tensorinspector.moc"
