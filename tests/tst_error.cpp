// Error's named constructors (engine/core/Result.h): every error says what was attempted and why,
// names its file and JSON pointer when it has them, and carries a kind only when asked to.
#include "testutil.h"

#include "engine/core/Result.h"

#include <QTest>

using kf::Error;

class TestError : public QObject {
    Q_OBJECT
private slots:
    void namedConstructorsFillTheirFields_data();
    void namedConstructorsFillTheirFields();
    void aKindIsAddedToACopy();
};

void TestError::namedConstructorsFillTheirFields_data()
{
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("message");
    QTest::newRow("a failed call with a hint") << 0 << "no CUDA device (run kforge doctor)";
    QTest::newRow("a failed call without a hint") << 1 << "no CUDA device";
    QTest::newRow("a bad value in a file") << 2 << "task.json: at /shapes/0: expected a number (fix the shape)";
    QTest::newRow("a whole file") << 3 << "task.json: expected an object";
}

void TestError::namedConstructorsFillTheirFields()
{
    QFETCH(int, which);
    QFETCH(QString, message);
    Error e;
    switch (which) {
    case 0: e = Error::failed("run verify", "no CUDA device", "run kforge doctor"); break;
    case 1: e = Error::failed("run verify", "no CUDA device"); break;
    case 2: e = Error::inFile("task.json", "/shapes/0", "read the task", "expected a number", "fix the shape"); break;
    default: e = Error::inFile("task.json", {}, "read the task", "expected an object"); break;
    }
    QVERIFY(!e.what.empty());
    QVERIFY(e.kind.empty());
    QCOMPARE(qs(e.message()), message);
}

void TestError::aKindIsAddedToACopy()
{
    const Error base = Error::failed("run on the GPU", "the GPU is full", "free GPU memory");
    const Error full = base.withKind(kf::kGpuOutOfMemory);
    QCOMPARE(qs(full.kind), QString(kf::kGpuOutOfMemory));
    QVERIFY(base.kind.empty());
    QCOMPARE(qs(full.message()), qs(base.message()));
    const Error placed = base.inFileAt("runners.json", "/endpoints/1");
    QCOMPARE(qs(placed.message()), QString("runners.json: at /endpoints/1: the GPU is full (free GPU memory)"));
}

QTEST_GUILESS_MAIN(TestError)
#include "tst_error.moc"
