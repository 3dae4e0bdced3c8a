// The live-diagnostics pipeline's owner of NVRTC: real builds on the worker thread, results
// tagged with generations, stale ones dropped, a newer edit cancelling the build in flight.
#include "app/gui/services/CompileService.h"
#include "testutil.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kf;
using kf::app::CompileService;

Q_DECLARE_METATYPE(std::shared_ptr<const kf::CompileResult>)

namespace {
CompileRequest requestFor(const std::string& source)
{
    CompileRequest r;
    r.source = source;
    r.fileName = "kernel.cu";
    r.options.arch = "sm_90";
    r.wantSass = false;
    return r;
}

const char* kGood = "__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n";
const char* kBroken = "__global__ void k(float* y)\n{\n    y[threadIdx.x] = undefined_value;\n}\n";
} // namespace

class TestCompileService : public QObject {
    Q_OBJECT
    QTemporaryDir m_cache;

private slots:
    void deliversDiagnosticsOfTheNewestEdit_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<bool>("success");
        QTest::addColumn<int>("errorLine");
        QTest::newRow("compiles") << QString(kGood) << true << 0;
        QTest::newRow("undeclared identifier on line 3") << QString(kBroken) << false << 3;
    }
    void deliversDiagnosticsOfTheNewestEdit()
    {
        QFETCH(QString, source);
        QFETCH(bool, success);
        QFETCH(int, errorLine);
        CompileService service(m_cache.path());
        QSignalSpy finished(&service, &CompileService::finished);
        QSignalSpy failed(&service, &CompileService::failed);
        const quint64 g = service.request("tab", requestFor(source.toStdString()));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size() + failed.size(), 1, 60000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(2).toString()));
        QCOMPARE(finished.first().at(1).toULongLong(), g);
        auto result = finished.first().at(2).value<std::shared_ptr<const CompileResult>>();
        QVERIFY(result);
        QCOMPARE(result->success, success);
        if (!success) {
            QVERIFY(!result->diagnostics.empty());
            QCOMPARE(result->diagnostics.front().line, errorLine);
        }
    }

    void olderEditsAreNeverDelivered()
    {
        CompileService service(m_cache.path());
        QSignalSpy finished(&service, &CompileService::finished);
        QSignalSpy idle(&service, &CompileService::idle);
        // Five keystrokes in a row: only the text after the last one may reach the editor.
        quint64 last = 0;
        for (int i = 0; i < 5; ++i)
            last = service.request("tab", requestFor(std::string(kBroken) + "// edit " + std::to_string(i) + "\n"));
        QTRY_VERIFY_WITH_TIMEOUT(!idle.isEmpty(), 60000);
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished.first().at(1).toULongLong(), last);
        QCOMPARE(service.latestGeneration("tab"), last);
    }

    void tabsDoNotCancelEachOther()
    {
        CompileService service(m_cache.path());
        QSignalSpy finished(&service, &CompileService::finished);
        QSignalSpy idle(&service, &CompileService::idle);
        service.request("a.cu", requestFor(kGood));
        service.request("b.cu", requestFor(kBroken));
        QTRY_VERIFY_WITH_TIMEOUT(!idle.isEmpty(), 60000);
        QCOMPARE(finished.size(), 2);
        QStringList tags = {finished.at(0).at(0).toString(), finished.at(1).at(0).toString()};
        tags.sort();
        QCOMPARE(tags, (QStringList{"a.cu", "b.cu"}));
    }

    void closingATabDropsItsResult()
    {
        CompileService service(m_cache.path());
        QSignalSpy finished(&service, &CompileService::finished);
        QSignalSpy idle(&service, &CompileService::idle);
        service.request("closed.cu", requestFor(std::string(kGood) + "// closing\n"));
        service.cancel("closed.cu");
        QTRY_VERIFY_WITH_TIMEOUT(!idle.isEmpty(), 60000);
        QCOMPARE(finished.size(), 0);
    }

    void unknownArchitectureIsASentence()
    {
        CompileService service(m_cache.path());
        QSignalSpy failed(&service, &CompileService::failed);
        CompileRequest r = requestFor(kGood);
        r.options.arch = "sm_13";
        service.request("tab", r);
        QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 1, 60000);
        QVERIFY2(failed.first().at(2).toString().contains("sm_13"), qPrintable(failed.first().at(2).toString()));
    }
};

QTEST_GUILESS_MAIN(TestCompileService)
#include "tst_compileservice.moc"
