// Tiles: the cache keeps to its budget and finds a coarser stand-in for a missing tile; the
// renderer renders only the latest wishes and drops results of a replaced case; zoomed out, the
// difference pane keeps a block's worst element so one bad value in a large tensor stays visible.
#include "casefixture.h"
#include "testutil.h"

#include "widgets/inspect/CaseData.h"
#include "widgets/inspect/Colormaps.h"
#include "widgets/inspect/OutputAnalysis.h"
#include "widgets/inspect/TileCache.h"
#include "widgets/inspect/TileRenderer.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThreadPool>

using kf::ui::TileCache;
using kf::ui::TileJob;
using kf::ui::TileKey;
using kf::ui::TileRenderer;
using kf::ui::TileSource;

namespace {

QImage tile(QRgb fill = 0xff336699)
{
    QImage img(TileSource::kTileSize, TileSource::kTileSize, QImage::Format_ARGB32_Premultiplied);
    img.fill(fill);
    return img;
}

} // namespace

class TestTileCache : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cacheKeepsToItsBudget();
    void coarserTileStandsInForAMissingOne_data();
    void coarserTileStandsInForAMissingOne();
    void aggregationKeepsTheWorstElement_data();
    void aggregationKeepsTheWorstElement();
    void newerWishesReplaceQueuedOnes();
    void resultsOfAReplacedCaseAreDropped();

private:
    std::shared_ptr<TileSource> source(int row, int col, const char* plant);
    QTemporaryDir m_tmp;
    int m_cases = 0;
};

void TestTileCache::initTestCase()
{
    QVERIFY(m_tmp.isValid());
}

std::shared_ptr<TileSource> TestTileCache::source(int row, int col, const char* plant)
{
    fixture::CaseBuilder b({512, 2048});
    const QByteArray p(plant);
    if (p == "outside")
        b.outside({row, col});
    else if (p == "nan")
        b.nanActual({row, col});
    else if (p == "unwritten")
        b.unwritten({row, col});
    const QString dir = m_tmp.filePath(QString::number(++m_cases));
    if (!b.write(dir))
        return nullptr;
    auto s = std::make_shared<TileSource>();
    s->kind = TileSource::Kind::Difference;
    s->data = kf::ui::CaseData::load(dir).value();
    const std::atomic<std::uint64_t> gen{1};
    s->analysis = kf::ui::analyseTensor(*s->data, 0, -1, gen, 1, {});
    s->output = 0;
    s->slice = kf::ui::SliceSpec::defaultFor({512, 2048});
    s->seal(static_cast<std::uint64_t>(m_cases));
    return s;
}

void TestTileCache::cacheKeepsToItsBudget()
{
    TileCache cache(1 << 20);  // four 256 KiB tiles
    for (int i = 0; i < 10; ++i)
        cache.insert(TileKey{1, 0, i, 0}, tile());
    QVERIFY(cache.count() <= 4);
    QVERIFY(cache.usedBytes() <= cache.budgetBytes());
    QVERIFY(cache.find(TileKey{1, 0, 9, 0}));   // the newest stays
    QVERIFY(!cache.find(TileKey{1, 0, 0, 0}));  // the oldest went first
}

void TestTileCache::coarserTileStandsInForAMissingOne_data()
{
    QTest::addColumn<int>("coarseLevel");
    QTest::addColumn<int>("tx");
    QTest::addColumn<int>("ty");
    QTest::addColumn<QRect>("part");
    QTest::newRow("one level up, bottom-right quarter") << 1 << 1 << 1 << QRect(128, 128, 128, 128);
    QTest::newRow("two levels up") << 2 << 3 << 2 << QRect(192, 128, 64, 64);
    QTest::newRow("from a magnified level") << -2 << 1 << 0 << QRect(128, 0, 128, 128);
}

void TestTileCache::coarserTileStandsInForAMissingOne()
{
    QFETCH(int, coarseLevel);
    QFETCH(int, tx);
    QFETCH(int, ty);
    QFETCH(QRect, part);
    TileCache cache;
    const int fine = coarseLevel == -2 ? -3 : 0;
    cache.insert(TileKey{7, coarseLevel, 0, 0}, tile());
    QRect got;
    QVERIFY(!cache.find(TileKey{7, fine, tx, ty}));
    QVERIFY(cache.coarser(TileKey{7, fine, tx, ty}, 4, &got));
    QCOMPARE(got, part);
    QVERIFY(!cache.coarser(TileKey{8, fine, tx, ty}, 4, &got));  // another source's tiles never stand in
}

void TestTileCache::aggregationKeepsTheWorstElement_data()
{
    QTest::addColumn<QByteArray>("plant");
    QTest::addColumn<int>("level");
    QTest::addColumn<QRgb>("colour");
    for (int level : {0, 2, 3}) {
        QTest::addRow("outside tolerance, level %d", level) << QByteArray("outside") << level << kf::ui::colormaps::ratioCode(0);
        QTest::addRow("NaN, level %d", level) << QByteArray("nan") << level << kf::ui::colormaps::kNonFinite;
        QTest::addRow("never written, level %d", level) << QByteArray("unwritten") << level << QRgb(0);
    }
}

void TestTileCache::aggregationKeepsTheWorstElement()
{
    QFETCH(QByteArray, plant);
    QFETCH(int, level);
    QFETCH(QRgb, colour);
    const int row = 301, col = 1555;
    auto s = source(row, col, plant.constData());
    QVERIFY(s && s->valid());
    const int block = 1 << level, span = TileSource::kTileSize * block;
    const QImage img = kf::ui::renderTile(*s, level, col / span, row / span);
    const QRgb px = img.pixel((col % span) / block, (row % span) / block);
    if (plant == "outside")
        QVERIFY2(qRed(px) > qGreen(px) + 70 && qRed(px) > qBlue(px) + 70, qPrintable(QString::number(px, 16)));
    else if (plant == "unwritten")
        QVERIFY(px == kf::ui::colormaps::kHazardYellow || px == kf::ui::colormaps::kHazardBlack);
    else
        QCOMPARE(px, colour);
    // Its neighbours, within tolerance, are blue.
    const QRgb next = img.pixel(((col % span) / block + 3) % TileSource::kTileSize, (row % span) / block);
    QVERIFY(qBlue(next) > qRed(next));
}

void TestTileCache::newerWishesReplaceQueuedOnes()
{
    QThreadPool pool;
    pool.setMaxThreadCount(1);
    TileRenderer renderer(&pool);
    auto s = source(0, 0, "outside");
    QVERIFY(s);
    QSignalSpy ready(&renderer, &TileRenderer::tileReady);
    std::vector<TileJob> many;
    for (int tx = 0; tx < 8; ++tx)
        many.push_back(TileJob{s, 0, tx, 1});
    renderer.want(0, many);
    renderer.want(0, {TileJob{s, 0, 3, 0}});  // the user scrolled before anything rendered
    QTRY_COMPARE(ready.count(), 1);
    pool.waitForDone();
    QCoreApplication::processEvents();
    QCOMPARE(renderer.cache().count(), 1);
    QVERIFY(renderer.cache().find(TileKey{s->id, 0, 3, 0}));
    QCOMPARE(renderer.pending(), 0);
}

void TestTileCache::resultsOfAReplacedCaseAreDropped()
{
    QThreadPool pool;
    pool.setMaxThreadCount(1);
    TileRenderer renderer(&pool);
    auto s = source(0, 0, "nan");
    QVERIFY(s);
    QSignalSpy ready(&renderer, &TileRenderer::tileReady);
    std::vector<TileJob> jobs;
    for (int tx = 0; tx < 8; ++tx)
        jobs.push_back(TileJob{s, 2, tx % 2, tx / 2});
    renderer.want(0, jobs);
    QTRY_VERIFY(renderer.pending() > 0);  // queued and running
    const quint64 before = renderer.generation();
    renderer.invalidate();                // a new case was opened
    QVERIFY(renderer.generation() > before);
    pool.waitForDone();
    QCoreApplication::processEvents();
    QCoreApplication::processEvents();
    QCOMPARE(ready.count(), 0);
    QCOMPARE(renderer.cache().count(), 0);
    QCOMPARE(renderer.pending(), 0);
}

QTEST_MAIN(TestTileCache)
#include "tst_tilecache.moc"
