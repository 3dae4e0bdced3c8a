// The verdict as a value: each report kind's words are read strictly, one rule says what passed.
#include "testutil.h"

#include "engine/protocol/ProfileReport.h"
#include "engine/protocol/RunReport.h"
#include "engine/protocol/Verdict.h"

#include <QTest>

#include <nlohmann/json.hpp>

using namespace kf::protocol;
using json = nlohmann::json;

class TestVerdict : public QObject {
    Q_OBJECT
private slots:
    void everyWordRoundTrips();
    void passRule_data();
    void passRule();
    void headerReadsTheKindsWordsOnly_data();
    void headerReadsTheKindsWordsOnly();
};

void TestVerdict::everyWordRoundTrips()
{
    for (Verdict v : {Verdict::Pass, Verdict::Fail, Verdict::Ok, Verdict::NoCounters, Verdict::Error}) {
        const auto back = parseVerdict(verdictName(v));
        QVERIFY(back.has_value());
        QCOMPARE(int(*back), int(v));
    }
    QVERIFY(!parseVerdict("PASS").has_value());
    QVERIFY(!parseVerdict("").has_value());
    QVERIFY(!parseVerdict("passed").has_value());
}

void TestVerdict::passRule_data()
{
    QTest::addColumn<int>("verdict");
    QTest::addColumn<bool>("passes");
    QTest::newRow("a verification that passed") << int(Verdict::Pass) << true;
    QTest::newRow("a benchmark that measured") << int(Verdict::Ok) << true;
    QTest::newRow("a wrong kernel") << int(Verdict::Fail) << false;
    QTest::newRow("a profile without counters") << int(Verdict::NoCounters) << false;
    QTest::newRow("a run that could not be done") << int(Verdict::Error) << false;
}

void TestVerdict::passRule()
{
    QFETCH(int, verdict);
    QFETCH(bool, passes);
    QCOMPARE(kf::protocol::passes(Verdict(verdict)), passes);
}

void TestVerdict::headerReadsTheKindsWordsOnly_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("verdict");
    QTest::addColumn<bool>("readable");
    QTest::newRow("correctness pass") << "correctness" << "pass" << true;
    QTest::newRow("correctness fail") << "correctness" << "fail" << true;
    QTest::newRow("correctness error") << "correctness" << "error" << true;
    // A forged or hand-edited report: a benchmark's word on a verification is not a pass.
    QTest::newRow("correctness ok") << "correctness" << "ok" << false;
    QTest::newRow("correctness PASS") << "correctness" << "PASS" << false;
    QTest::newRow("correctness missing") << "correctness" << "" << false;
    QTest::newRow("performance ok") << "performance" << "ok" << true;
    QTest::newRow("performance pass") << "performance" << "pass" << false;
    QTest::newRow("performance no_counters") << "performance" << "no_counters" << false;
}

void TestVerdict::headerReadsTheKindsWordsOnly()
{
    QFETCH(QString, kind);
    QFETCH(QString, verdict);
    QFETCH(bool, readable);
    json j = {{"schema_version", 1}, {"kind", kind.toStdString()}, {"summary", ""}};
    if (!verdict.isEmpty())
        j["verdict"] = verdict.toStdString();
    const auto r = RunReport::fromJson(j, "report.json");
    QCOMPARE(bool(r), readable);
    if (readable) {
        QCOMPARE(qs(r->header().verdict), verdict);
        QCOMPARE(r->header().passed(), verdict == "pass" || verdict == "ok");
    } else {
        QCOMPARE(qs(r.error().pointer), QString("/verdict"));
        QVERIFY2(qs(r.error().message()).contains("verdict"), qPrintable(qs(r.error().message())));
    }
}

QTEST_GUILESS_MAIN(TestVerdict)
#include "tst_verdict.moc"
