// The registry service over a real registry on disk (promoted without a GPU): the index loads off
// the UI thread, a write by another writer shows up through the file watcher (also after an
// atomic rename replaced the index), details and sources load, deprecate and remove work and
// say so, and results of superseded requests never arrive.
#include "testutil.h"

#include "registrysample.h"

#include "app/gui/registry/RegistryService.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <filesystem>
#include <memory>

using kf::app::RegistryService;

namespace {

kf::RegistryIndex lastIndex(const QSignalSpy& spy)
{
    return spy.last().at(0).value<kf::RegistryIndex>();
}

const kf::RegistryEntry* findIn(const kf::RegistryIndex& index, const QString& id)
{
    return index.find(id.toStdString());
}

} // namespace

class TestRegistryService : public QObject {
    Q_OBJECT

private slots:
    void init();
    void indexLoadsOffTheUiThread();
    void anotherWritersDeprecateAndPromoteShowUp();
    void aRegistryCreatedLaterShowsUp();
    void damagedIndexFailsWithASentence();
    void detailsLoad();
    void detailsOfAnUnknownIdSaySo();
    void staleDetailsAreDropped();
    void staleSourceIsDropped();
    void newDirectoryDropsResultsOfTheOldOne();
    void deprecateWorksAndRefreshes();
    void removeWorksAndRefreshes();
    void failedRemoveSaysWhatHappened();

private:
    QString directory() const { return QString::fromStdString(m_sample.directory.string()); }
    void startOn(RegistryService& service, const QString& dir, QSignalSpy& indexes);

    std::unique_ptr<QTemporaryDir> m_tmp;
    kf::test::SampleRegistry m_sample;
};

void TestRegistryService::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_sample = kf::test::makeSampleRegistry(m_tmp->path().toStdString());
    QVERIFY2(m_sample.error.isEmpty(), qPrintable(m_sample.error));
}

void TestRegistryService::startOn(RegistryService& service, const QString& dir, QSignalSpy& indexes)
{
    service.setDirectory(dir);
    QTRY_COMPARE(indexes.count(), 1);
    QTRY_COMPARE(service.jobsInFlight(), 0);
}

void TestRegistryService::indexLoadsOffTheUiThread()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy failures(&service, &RegistryService::loadFailed);
    service.setDirectory(directory());
    QCOMPARE(indexes.count(), 0); // nothing read on the caller's thread
    QVERIFY(service.jobsInFlight() > 0);
    QTRY_COMPARE(indexes.count(), 1);
    QCOMPARE(failures.count(), 0);
    const kf::RegistryIndex index = lastIndex(indexes);
    QCOMPARE(int(index.kernels.size()), 4);
    QVERIFY(findIn(index, m_sample.softmaxV1)->deprecated());
    QCOMPARE(index.threshold, kf::kDefaultSpeedupThreshold);
}

void TestRegistryService::anotherWritersDeprecateAndPromoteShowUp()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    startOn(service, directory(), indexes);

    // A second writer (the CLI, another workbench) changes the index: the watcher notices.
    const kf::Registry other(m_sample.directory);
    KF_VERIFY_OK(other.deprecate(m_sample.layerNorm.toStdString(), "slower than LibTorch 2.12"));
    QTRY_VERIFY(findIn(lastIndex(indexes), m_sample.layerNorm) && findIn(lastIndex(indexes), m_sample.layerNorm)->deprecated());
    QCOMPARE(findIn(lastIndex(indexes), m_sample.layerNorm)->deprecationReason, std::string("slower than LibTorch 2.12"));

    // The index file was replaced by a rename; the next write must still be seen.
    const std::filesystem::path task = m_tmp->path().toStdString() + "/softmax_fp32";
    auto promoted = other.promote(kf::test::passingInput(task, "optimized.cu", {1.7, 1.8}));
    KF_VERIFY_OK(promoted);
    QVERIFY2(promoted->entry, promoted->gates.sentence().c_str());
    const QString v3 = QString::fromStdString(promoted->entry->id);
    QCOMPARE(v3, QStringLiteral("cuda_softmax_h100_fp32_b8192-d4096_v3"));
    QTRY_VERIFY(findIn(lastIndex(indexes), v3));
    QCOMPARE(int(lastIndex(indexes).kernels.size()), 5);
}

void TestRegistryService::aRegistryCreatedLaterShowsUp()
{
    const QString fresh = QDir(m_tmp->path()).filePath(QStringLiteral("later/registry"));
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    startOn(service, fresh, indexes);
    QCOMPARE(int(lastIndex(indexes).kernels.size()), 0); // no folder yet: an empty registry, not an error

    // The first promotion creates the folders above the registry too.
    const std::filesystem::path task = m_tmp->path().toStdString() + "/layer_norm_bf16";
    auto promoted = kf::Registry(fresh.toStdString()).promote(kf::test::passingInput(task, "optimized.cu", {1.9, 2.4}));
    KF_VERIFY_OK(promoted);
    QVERIFY(promoted->entry);
    QTRY_COMPARE(int(lastIndex(indexes).kernels.size()), 1);
}

void TestRegistryService::damagedIndexFailsWithASentence()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy failures(&service, &RegistryService::loadFailed);
    startOn(service, directory(), indexes);
    QFile index(QDir(directory()).filePath(QStringLiteral("verified_kernels.json")));
    QVERIFY(index.open(QIODevice::WriteOnly | QIODevice::Truncate));
    index.write("{\"schema_version\": 1, \"kernels\": [");
    index.close();
    QTRY_COMPARE(failures.count(), 1);
    const QString sentence = failures.first().at(0).toString();
    QVERIFY2(sentence.startsWith(QStringLiteral("The registry index could not be read: ")), qPrintable(sentence));
    QVERIFY2(sentence.contains(QStringLiteral("verified_kernels.json")), qPrintable(sentence));
    QVERIFY(sentence.endsWith(QLatin1Char('.')) || sentence.endsWith(QLatin1Char(')')));
}

void TestRegistryService::detailsLoad()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy details(&service, &RegistryService::detailsLoaded);
    startOn(service, directory(), indexes);
    service.loadDetails(m_sample.softmaxV2);
    QTRY_COMPARE(details.count(), 1);
    const auto d = details.first().at(0).value<RegistryService::Details>();
    QVERIFY2(d.error.isEmpty(), qPrintable(d.error));
    QCOMPARE(QString::fromStdString(d.entry.id), m_sample.softmaxV2);
    QCOMPARE(d.entry.kernelFile, std::string("optimized.cu"));
    QVERIFY(d.promotion);
    QCOMPARE(QString::fromStdString(d.promotion->id), m_sample.softmaxV2);
    QVERIFY(d.promotion->evidenceScope.find("op-level microbenchmark") == 0);
    QVERIFY(d.correctness && d.correctness->verify());
    QVERIFY(d.performance && d.performance->bench());
    QCOMPARE(int(d.performance->bench()->shapes.size()), 2);
    QVERIFY(d.source.contains(QStringLiteral("expf again")));
    QVERIFY(d.source.contains(QStringLiteral("__global__")));

    QSignalSpy sources(&service, &RegistryService::sourceLoaded);
    service.loadSource(m_sample.softmaxV1);
    QTRY_COMPARE(sources.count(), 1);
    QCOMPARE(sources.first().at(0).toString(), m_sample.softmaxV1);
    QVERIFY(sources.first().at(1).toString().contains(QStringLiteral("__expf(")));
    QCOMPARE(sources.first().at(2).toString(), QString());
}

void TestRegistryService::detailsOfAnUnknownIdSaySo()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy details(&service, &RegistryService::detailsLoaded);
    startOn(service, directory(), indexes);
    service.loadDetails(QStringLiteral("cuda_softmax_h100_fp32_b8192-d4096_v9"));
    QTRY_COMPARE(details.count(), 1);
    const auto d = details.first().at(0).value<RegistryService::Details>();
    QCOMPARE(QString::fromStdString(d.entry.id), QStringLiteral("cuda_softmax_h100_fp32_b8192-d4096_v9"));
    QVERIFY(!d.promotion);
    QVERIFY(d.source.isEmpty());
    QVERIFY2(d.error.contains(m_sample.softmaxV2), qPrintable(d.error)); // the IDs that are there
}

void TestRegistryService::staleDetailsAreDropped()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy details(&service, &RegistryService::detailsLoaded);
    startOn(service, directory(), indexes);
    // The user clicks through three rows faster than the disk answers.
    service.loadDetails(m_sample.softmaxV1);
    service.loadDetails(m_sample.softmaxA100);
    service.loadDetails(m_sample.layerNorm);
    QTRY_COMPARE(service.jobsInFlight(), 0); // every answer is in (delivered or dropped)
    QCOMPARE(details.count(), 1);
    QCOMPARE(QString::fromStdString(details.first().at(0).value<RegistryService::Details>().entry.id), m_sample.layerNorm);
}

void TestRegistryService::staleSourceIsDropped()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy sources(&service, &RegistryService::sourceLoaded);
    startOn(service, directory(), indexes);
    service.loadSource(m_sample.softmaxV1);
    service.loadSource(m_sample.softmaxA100);
    QTRY_COMPARE(service.jobsInFlight(), 0);
    QCOMPARE(sources.count(), 1);
    QCOMPARE(sources.first().at(0).toString(), m_sample.softmaxA100);
}

void TestRegistryService::newDirectoryDropsResultsOfTheOldOne()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy details(&service, &RegistryService::detailsLoaded);
    startOn(service, directory(), indexes);
    service.loadDetails(m_sample.softmaxV2);
    service.setDirectory(QDir(m_tmp->path()).filePath(QStringLiteral("elsewhere")));
    QTRY_COMPARE(service.jobsInFlight(), 0);
    QCOMPARE(details.count(), 0);
    QCOMPARE(indexes.count(), 2);
    QCOMPARE(int(lastIndex(indexes).kernels.size()), 0);
}

void TestRegistryService::deprecateWorksAndRefreshes()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy done(&service, &RegistryService::operationFinished);
    startOn(service, directory(), indexes);
    service.deprecate(m_sample.softmaxA100, QStringLiteral("re-verified slower on driver 590"));
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(done.first().at(0).toBool(), true);
    QCOMPARE(done.first().at(1).toString(), m_sample.softmaxA100 + QStringLiteral(" is deprecated: re-verified slower on driver 590."));
    QTRY_VERIFY(findIn(lastIndex(indexes), m_sample.softmaxA100)->deprecated());
    auto onDisk = kf::Registry(m_sample.directory).entry(m_sample.softmaxA100.toStdString());
    KF_VERIFY_OK(onDisk);
    QCOMPARE(onDisk->deprecationReason, std::string("re-verified slower on driver 590"));
}

void TestRegistryService::removeWorksAndRefreshes()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy done(&service, &RegistryService::operationFinished);
    startOn(service, directory(), indexes);
    service.remove(m_sample.softmaxV1);
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(done.first().at(0).toBool(), true);
    QCOMPARE(done.first().at(1).toString(), m_sample.softmaxV1 + QStringLiteral(" was removed from the registry."));
    QTRY_VERIFY(!findIn(lastIndex(indexes), m_sample.softmaxV1));
    QCOMPARE(int(lastIndex(indexes).kernels.size()), 3);
    QVERIFY(!QFileInfo::exists(QDir(directory()).filePath(m_sample.softmaxV1)));
}

void TestRegistryService::failedRemoveSaysWhatHappened()
{
    RegistryService service;
    QSignalSpy indexes(&service, &RegistryService::indexLoaded);
    QSignalSpy done(&service, &RegistryService::operationFinished);
    startOn(service, directory(), indexes);
    service.remove(QStringLiteral("cuda_gemm_h100_fp16_m4096-n4096-k4096_v1"));
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(done.first().at(0).toBool(), false);
    const QString sentence = done.first().at(1).toString();
    QVERIFY2(sentence.startsWith(QStringLiteral("cuda_gemm_h100_fp16_m4096-n4096-k4096_v1 was not removed: ")), qPrintable(sentence));
    QVERIFY2(sentence.contains(m_sample.layerNorm), qPrintable(sentence)); // what is there instead
    QTRY_COMPARE(service.jobsInFlight(), 0);
    QCOMPARE(int(lastIndex(indexes).kernels.size()), 4);
}

QTEST_MAIN(TestRegistryService)
#include "tst_registryservice.moc"
