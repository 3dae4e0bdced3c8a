// The inspector at scale: a 4096×4096 fp32 output pans and zooms without stalling the event
// loop, and one bad element in 16 M still shows when zoomed out. With KF_INSPECTOR_SHOT set, it
// also writes /tmp/inspector-shot.png (the workbench's dark palette) for people to look at.
#include "casefixture.h"
#include "inspecthelpers.h"
#include "testutil.h"

#include "widgets/common/StatusColors.h"
#include "widgets/inspect/TensorViewport.h"
#include "widgets/inspect/TileRenderer.h"

#include <QElapsedTimer>
#include <QPalette>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QWheelEvent>

using namespace inspecttest;

class TestInspectorPerformance : public QObject {
    Q_OBJECT

private slots:
    void largeOutputStaysResponsive();
    void screenshot();
};

void TestInspectorPerformance::largeOutputStaysResponsive()
{
    QTemporaryDir tmp;
    const QString dir = tmp.filePath(QStringLiteral("big"));
    {
        fixture::CaseBuilder big({4096, 4096});
        for (std::int64_t r = 3900; r < 4096; ++r)
            for (std::int64_t c = 3968; c < 4096; ++c)
                big.outside({r, c}, 0.25);  // a wrong tail block
        big.nanActual({1234, 2345});
        big.unwritten({77, 3000});
        KF_VERIFY_OK(big.write(dir));
    }
    TensorInspector w;
    QElapsedTimer clock;
    clock.start();
    QVERIFY(open(w, dir, {1400, 900}));
    const qint64 passMs = clock.elapsed();
    QCOMPARE(w.analysis()->nonFinite, 1);
    QCOMPARE(w.analysis()->unwritten, 1);
    QCOMPARE(w.analysis()->outside, 196 * 128);

    // A 5 ms heartbeat: the longest gap between its ticks is the longest the UI was frozen.
    qint64 longest = 0, ticks = 0;
    QElapsedTimer beat;
    QTimer heartbeat;
    heartbeat.setInterval(5);
    QObject::connect(&heartbeat, &QTimer::timeout, &w, [&] {
        if (beat.isValid())
            longest = std::max(longest, beat.restart());
        else
            beat.start();
        ++ticks;
    });
    heartbeat.start();
    auto pump = [](int ms) {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < ms)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 2);
    };
    TensorCanvas* panes[] = {w.pane(Pane::Reference), w.pane(Pane::Candidate), w.pane(Pane::Difference)};
    clock.restart();
    int events = 0;
    for (int i = 0; i < 60; ++i) {
        TensorCanvas* p = panes[i % 3];
        const QPoint at = p->imageRect().center() + QPoint((i * 37) % 200 - 100, (i * 53) % 160 - 80);
        const int delta = (i / 6) % 2 == 0 ? 120 : -120;  // six steps in, six out
        QWheelEvent wheel(at, p->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(p, &wheel);
        ++events;
        pump(8);
        QTest::mousePress(p, Qt::LeftButton, Qt::NoModifier, at);
        for (int k = 1; k <= 3; ++k) {
            QTest::mouseMove(p, at + QPoint(k * 25, k * 15));
            ++events;
            pump(8);
        }
        QTest::mouseRelease(p, Qt::LeftButton, Qt::NoModifier, at + QPoint(75, 45));
    }
    const qint64 interactMs = clock.elapsed();
    QVERIFY(settled(w, 60000));
    heartbeat.stop();
    qInfo("4096x4096 fp32: data pass %lld ms; %d wheel/drag events in %lld ms; longest event-loop gap %lld ms "
          "over %lld heartbeats; tile cache %lld MiB in %d tiles",
          passMs, events, interactMs, longest, ticks, static_cast<long long>(w.renderer()->cache().usedBytes() >> 20),
          w.renderer()->cache().count());
    QVERIFY(events >= 100);
    QVERIFY2(longest < 250, qPrintable(QStringLiteral("the UI froze for %1 ms").arg(longest)));
    // Zoomed out fully, the lone NaN and the unwritten element still show in the difference pane.
    w.fitView();
    QVERIFY(settled(w, 60000));
    const QImage img = grabPane(w, Pane::Difference);
    auto near = [&](std::int64_t r, std::int64_t c, bool (*test)(QRgb)) {
        const QPoint p = w.pane(Pane::Difference)->cellCentre(r, c);
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
                if (test(img.pixel(p.x() + dx, p.y() + dy)))
                    return true;
        return false;
    };
    QVERIFY(near(1234, 2345, isMagenta));
    QVERIFY(near(77, 3000, isHazard));
    QVERIFY(near(4000, 4000, isRed));
}

void TestInspectorPerformance::screenshot()
{
    const QByteArray path = qgetenv("KF_INSPECTOR_SHOT");
    if (path.isEmpty())
        QSKIP("set KF_INSPECTOR_SHOT=1 to write /tmp/inspector-shot.png");
    // The workbench's dark palette (what Theme applies), so the picture is what users see.
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(kf::ui::workbenchDarkPalette());

    QTemporaryDir tmp;
    const QString dir = tmp.filePath(QStringLiteral("03-tail-B200-D300-t1"));
    fixture::CaseBuilder b({200, 300});
    for (std::int64_t r = 0; r < 200; ++r)
        for (std::int64_t c = 288; c < 300; ++c)
            b.outside({r, c}, 0.02 * (1 + (r % 7)));  // the kernel's tail block is wrong
    for (std::int64_t c = 17; c < 288; c += 17)
        b.outside({120, c}, 3e-4);
    b.nanActual({42, 100});
    b.infActual({43, 101});
    for (std::int64_t r = 160; r < 168; ++r)
        for (std::int64_t c = 0; c < 32; ++c)
            b.unwritten({r, c});
    KF_VERIFY_OK(b.write(dir));
    TensorInspector w;
    QVERIFY(open(w, dir, {1400, 900}));
    QVERIFY(settled(w));
    TensorCanvas* diff = w.pane(Pane::Difference);
    hoverAt(diff, diff->cellCentre(42, 100));
    QTRY_VERIFY(w.viewport()->hasHover());
    QVERIFY(settled(w));
    QVERIFY(w.grab().save(QStringLiteral("/tmp/inspector-shot.png")));
    w.next();
    w.next();
    w.findChild<QTabWidget*>()->setCurrentIndex(1);
    QVERIFY(settled(w));
    QVERIFY(w.grab().save(QStringLiteral("/tmp/inspector-shot-zoomed.png")));
    w.setDiffMode(kf::ui::DiffMode::AbsError);
    w.fitView();
    QVERIFY(settled(w));
    QVERIFY(w.grab().save(QStringLiteral("/tmp/inspector-shot-abs.png")));
    qInfo("wrote /tmp/inspector-shot.png, /tmp/inspector-shot-zoomed.png and /tmp/inspector-shot-abs.png");
}

QTEST_MAIN(TestInspectorPerformance)
#include "tst_inspectorperf.moc"
