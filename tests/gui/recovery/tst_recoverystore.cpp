// Crash recovery of unsaved buffers: what the next start offers, and what it must not offer.
#include "testutil.h"

#include "app/gui/recovery/RecoveryStore.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using kf::app::RecoveryStore;

namespace {

void writeText(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

} // namespace

class TestRecoveryStore : public QObject {
    Q_OBJECT
private slots:
    void init();
    void unsavedBufferSurvivesARestart();
    void removedBufferIsNotOffered();
    void bufferEqualToTheDiskIsNotOffered();
    void newFileNeverSavedIsOffered();
    void corruptFilesAreSkipped_data();
    void corruptFilesAreSkipped();
    void fileChangedOnDiskSinceTheEditIsFlagged_data();
    void fileChangedOnDiskSinceTheEditIsFlagged();
    void defaultDirectoryIsPerUser();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_source;   // the file being edited
    QString m_store;    // the recovery folder
};

void TestRecoveryStore::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_source = m_tmp->filePath("kernel.cu");
    m_store = m_tmp->filePath("recovery");
    writeText(m_source, "__global__ void k() {}\n");
}

void TestRecoveryStore::unsavedBufferSurvivesARestart()
{
    const QString text = QStringLiteral("__global__ void k() { /* typed, not saved: ünïcode */ }\n");
    const QDateTime before = QDateTime::currentDateTimeUtc().addSecs(-1);
    {
        RecoveryStore store(m_store);
        QVERIFY(store.save(m_source, text));
        QVERIFY(store.save(m_source, text + "// more\n")); // a later snapshot replaces the first
    }
    RecoveryStore afterCrash(m_store);
    const auto pending = afterCrash.pending();
    QCOMPARE(pending.size(), 1);
    QCOMPARE(pending[0].filePath, QDir::cleanPath(m_source));
    QCOMPARE(pending[0].text, text + "// more\n");
    QVERIFY(!pending[0].fileChangedSinceEdit);
    QVERIFY(pending[0].savedAt >= before);
    QVERIFY(pending[0].savedAt <= QDateTime::currentDateTimeUtc().addSecs(1));
}

void TestRecoveryStore::removedBufferIsNotOffered()
{
    RecoveryStore store(m_store);
    QVERIFY(store.save(m_source, "edited"));
    QVERIFY(QFile::exists(store.snapshotPath(m_source)));
    store.remove(m_source);
    QVERIFY(!QFile::exists(store.snapshotPath(m_source)));
    QCOMPARE(RecoveryStore(m_store).pending().size(), 0);
}

void TestRecoveryStore::bufferEqualToTheDiskIsNotOffered()
{
    RecoveryStore store(m_store);
    QVERIFY(store.save(m_source, "the final text\n"));
    // The user saved for real but the app died before it could drop the snapshot.
    writeText(m_source, "the final text\n");
    QCOMPARE(store.pending().size(), 0);
    QVERIFY(!QFile::exists(store.snapshotPath(m_source))); // stale snapshot cleaned up
}

void TestRecoveryStore::newFileNeverSavedIsOffered()
{
    RecoveryStore store(m_store);
    const QString fresh = m_tmp->filePath("never_saved.cu");
    QVERIFY(store.save(fresh, "new work"));
    const auto pending = store.pending();
    QCOMPARE(pending.size(), 1);
    QCOMPARE(pending[0].text, QString("new work"));
    QVERIFY(!pending[0].fileChangedSinceEdit);
}

void TestRecoveryStore::corruptFilesAreSkipped_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::newRow("torn JSON") << QByteArray("{\"path\": \"/x.cu\", \"text\": \"abc");
    QTest::newRow("empty file") << QByteArray();
    QTest::newRow("JSON array") << QByteArray("[1, 2]");
    QTest::newRow("no text") << QByteArray("{\"path\": \"/x.cu\"}");
    QTest::newRow("path is a number") << QByteArray("{\"path\": 7, \"text\": \"abc\"}");
}

void TestRecoveryStore::corruptFilesAreSkipped()
{
    QFETCH(QByteArray, content);
    RecoveryStore store(m_store);
    QVERIFY(store.save(m_source, "good buffer"));
    writeText(m_store + "/0000corrupt.json", content);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("recovery file"));
    const auto pending = store.pending();
    QCOMPARE(pending.size(), 1);
    QCOMPARE(pending[0].text, QString("good buffer"));
    QVERIFY(QFile::exists(m_store + "/0000corrupt.json")); // left for a human, never deleted
}

void TestRecoveryStore::fileChangedOnDiskSinceTheEditIsFlagged_data()
{
    QTest::addColumn<QString>("diskChange");
    QTest::addColumn<bool>("flagged");
    QTest::newRow("untouched") << "none" << false;
    QTest::newRow("another tool rewrote it") << "rewrite" << true;
    QTest::newRow("deleted") << "delete" << true;
}

void TestRecoveryStore::fileChangedOnDiskSinceTheEditIsFlagged()
{
    QFETCH(QString, diskChange);
    QFETCH(bool, flagged);
    RecoveryStore store(m_store);
    QVERIFY(store.save(m_source, "my edit 1"));
    if (diskChange == "rewrite")
        writeText(m_source, "// changed by git checkout\n");
    else if (diskChange == "delete")
        QVERIFY(QFile::remove(m_source));
    // The user keeps typing after the change: the base stays the file as it was when editing began.
    QVERIFY(store.save(m_source, "my edit 2"));
    const auto pending = RecoveryStore(m_store).pending();
    QCOMPARE(pending.size(), 1);
    QCOMPARE(pending[0].text, QString("my edit 2"));
    QCOMPARE(pending[0].fileChangedSinceEdit, flagged);
}

void TestRecoveryStore::defaultDirectoryIsPerUser()
{
    QStandardPaths::setTestModeEnabled(true);
    RecoveryStore store;
    QVERIFY(store.directory().endsWith("/recovery"));
    QVERIFY(store.directory().startsWith(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation)));
}

QTEST_GUILESS_MAIN(TestRecoveryStore)
#include "tst_recoverystore.moc"
