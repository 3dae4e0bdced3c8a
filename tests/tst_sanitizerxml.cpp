// compute-sanitizer's XML read into findings (engine/sanitize/SanitizerXml.h): the real reports of
// the probe programs in tests/fixtures/sanitizer (README.md there says where they came from), one
// row each with the kinds, kernel, line, thread and block it must give; files that are not a
// report; and which findings belong to the candidate's kernels.
#include "testutil.h"

#include "engine/sanitize/SanitizerXml.h"

#include <QFile>
#include <QTest>

using namespace kf;
using kf::protocol::SanitizerFinding;

namespace {

const QString kFixtures = QString(KF_SOURCE_DIR) + "/tests/fixtures/sanitizer/";

std::string fixture(const QString& name)
{
    QFile f(kFixtures + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing fixture %s", qPrintable(name));
    return f.readAll().toStdString();
}

QString dim3(const std::optional<std::array<std::int64_t, 3>>& v)
{
    return v ? QStringLiteral("%1,%2,%3").arg((*v)[0]).arg((*v)[1]).arg((*v)[2]) : QString();
}

QString kinds(const std::vector<SanitizerFinding>& findings)
{
    QStringList k;
    for (const SanitizerFinding& f : findings)
        k << qs(f.kind);
    return k.join(QLatin1Char(','));
}

Result<sanitize::ParsedXml> parseFixture(const QString& name, const std::string& tool)
{
    return sanitize::parseSanitizerXml(fixture(name), tool, name.toStdString());
}

} // namespace

class TestSanitizerXml : public QObject {
    Q_OBJECT
private slots:
    void fixtures_data();
    void fixtures();
    void memcheckRecord();
    void raceAnalysis();
    void raceHazards();
    void unknownElements();
    void errors_data();
    void errors();
    void inKernels_data();
    void inKernels();
};

void TestSanitizerXml::fixtures_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QString>("kinds");
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("access");
    QTest::addColumn<QString>("thread");
    QTest::addColumn<QString>("block");
    QTest::addColumn<QString>("severity");
    QTest::addColumn<bool>("hostSide");

    QTest::newRow("memcheck out-of-bounds read") << "memcheck_oob_read.xml" << "memcheck" << "oob_read,api_error"
        << "shift_add" << 8 << "read" << "231,0,0" << "3,0,0" << "error" << false;
    QTest::newRow("racecheck analysis") << "racecheck_smem.xml" << "racecheck"
        << "shared_race,shared_race,shared_race,shared_race,shared_race" << "block_sum" << 12 << "write" << "" << "" << "warning" << false;
    QTest::newRow("racecheck hazards") << "racecheck_all.xml" << "racecheck" << "shared_race,shared_race,shared_race"
        << "block_sum" << 12 << "read" << "0,0,0" << "8,0,0" << "warning" << false;
    QTest::newRow("initcheck global") << "initcheck_global.xml" << "initcheck"
        << "uninit_global_read,uninit_global_read,uninit_global_read" << "add_bias" << 7 << "read" << "0,0,0" << "8,0,0" << "error" << false;
    QTest::newRow("synccheck divergent") << "synccheck_divergent.xml" << "synccheck"
        << "barrier_divergent,barrier_divergent,barrier_divergent" << "partial_barrier" << 9 << "barrier" << "0,0,0" << "2,0,0"
        << "error" << false;
    QTest::newRow("clean") << "clean.xml" << "memcheck" << "" << "" << 0 << "" << "" << "" << "" << false;
    QTest::newRow("clean under racecheck") << "clean.xml" << "racecheck" << "" << "" << 0 << "" << "" << "" << "" << false;
    QTest::newRow("unknown elements") << "unknown_elements.xml" << "memcheck" << "oob_write,other,misaligned" << "scale"
        << 21 << "write" << "1,2,3" << "4,5,6" << "error" << false;
    QTest::newRow("host access (hand-written)") << "host_access_handwritten.xml" << "initcheck" << "uninit_global_read"
        << "" << 0 << "" << "" << "" << "error" << true;
    QTest::newRow("host access under memcheck") << "host_access_handwritten.xml" << "memcheck" << "api_error"
        << "" << 0 << "" << "" << "" << "error" << true;
}

void TestSanitizerXml::fixtures()
{
    QFETCH(QString, file);
    QFETCH(QString, tool);
    QFETCH(QString, kinds);
    QFETCH(QString, kernel);
    QFETCH(int, line);
    QFETCH(QString, access);
    QFETCH(QString, thread);
    QFETCH(QString, block);
    QFETCH(QString, severity);
    QFETCH(bool, hostSide);

    const auto parsed = parseFixture(file, tool.toStdString());
    KF_VERIFY_OK(parsed);
    QCOMPARE(::kinds(parsed->findings), kinds);
    QCOMPARE(parsed->records, static_cast<std::int64_t>(parsed->findings.size()));
    if (parsed->findings.empty())
        return;
    const SanitizerFinding& f = parsed->findings.front();
    QCOMPARE(qs(f.tool), tool);
    QCOMPARE(qs(f.where.kernel), kernel);
    QCOMPARE(f.where.line, line);
    QCOMPARE(qs(f.where.access), access);
    QCOMPARE(dim3(f.where.thread), thread);
    QCOMPARE(dim3(f.where.block), block);
    QCOMPARE(qs(f.severity), severity);
    QCOMPARE(f.hostSide, hostSide);
    QVERIFY(!f.description.empty());
    if (line > 0)
        QVERIFY2(qs(f.where.file).startsWith("tests/gpu/sanitizer_probe/"), f.where.file.c_str());
}

void TestSanitizerXml::memcheckRecord()
{
    const auto parsed = parseFixture("memcheck_oob_read.xml", "memcheck");
    KF_VERIFY_OK(parsed);
    QCOMPARE(parsed->findings.size(), size_t(2));
    const SanitizerFinding& f = parsed->findings[0];
    QCOMPARE(qs(f.where.access), QStringLiteral("read"));
    QCOMPARE(qs(f.where.pc), QStringLiteral("0xc0"));
    QCOMPARE(qs(f.space), QStringLiteral("__global__"));
    QCOMPARE(f.size, std::int64_t(4));
    QCOMPARE(qs(f.address), QStringLiteral("0x7fc234800fa0"));
    QCOMPARE(f.count, std::int64_t(1));
    QVERIFY(!f.other);
    QCOMPARE(qs(f.summary()), QStringLiteral("compute-sanitizer memcheck: out-of-bounds read of 4 bytes in shift_add at "
                                             "oob_read.cu:8, block (3,0,0) thread (231,0,0)"));
    // The launch failure the read caused, seen by the host: kept, but not the kernel's access.
    const SanitizerFinding& api = parsed->findings[1];
    QVERIFY(api.hostSide);
    QVERIFY(api.where.kernel.empty());
    QCOMPARE(qs(api.description), QStringLiteral("Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified "
                                                 "launch failure\" on CUDA API call to cudaDeviceSynchronize."));
}

void TestSanitizerXml::raceAnalysis()
{
    const auto parsed = parseFixture("racecheck_smem.xml", "racecheck");
    KF_VERIFY_OK(parsed);
    const SanitizerFinding& f = parsed->findings.front();
    QCOMPARE(qs(f.where.access), QStringLiteral("write"));
    QCOMPARE(qs(f.where.pc), QStringLiteral("0x200"));
    QVERIFY(f.other);
    QCOMPARE(qs(f.other->access), QStringLiteral("read"));
    QCOMPARE(qs(f.other->pc), QStringLiteral("0x1e0"));   // the first destination
    QCOMPARE(f.other->line, 12);
    QCOMPARE(f.count, std::int64_t(4096 + 2048));        // every destination's hazards
    QCOMPARE(qs(f.space), QStringLiteral("__shared__"));
    QCOMPARE(qs(f.summary()), QStringLiteral("compute-sanitizer racecheck: shared-memory race (write at line 12 / read "
                                             "at line 12) in block_sum"));
    // The last record is a read racing with a later write.
    QCOMPARE(qs(parsed->findings.back().where.access), QStringLiteral("read"));
    QCOMPARE(qs(parsed->findings.back().other->access), QStringLiteral("write"));
    QCOMPARE(parsed->findings.back().count, std::int64_t(256));
}

void TestSanitizerXml::raceHazards()
{
    const auto parsed = parseFixture("racecheck_all.xml", "racecheck");
    KF_VERIFY_OK(parsed);
    const SanitizerFinding& f = parsed->findings.front();
    QCOMPARE(qs(f.where.access), QStringLiteral("read"));
    QCOMPARE(qs(f.where.pc), QStringLiteral("0x1e0"));
    QCOMPARE(qs(f.address), QStringLiteral("0x440"));
    QVERIFY(f.other);
    QCOMPARE(qs(f.other->access), QStringLiteral("write"));
    QCOMPARE(dim3(f.other->thread), QStringLiteral("16,0,0"));
    QCOMPARE(dim3(f.other->block), QStringLiteral("8,0,0"));
    QCOMPARE(f.count, std::int64_t(1));
}

void TestSanitizerXml::unknownElements()
{
    const auto parsed = parseFixture("unknown_elements.xml", "memcheck");
    KF_VERIFY_OK(parsed);
    QCOMPARE(parsed->records, std::int64_t(3));   // the record inside <session> is not one of the root's
    const SanitizerFinding& w = parsed->findings[0];
    QCOMPARE(w.size, std::int64_t(8));
    QCOMPARE(qs(w.where.pc), QStringLiteral("0x1f0"));
    const SanitizerFinding& other = parsed->findings[1];
    QCOMPARE(qs(other.description), QStringLiteral("A check that does not exist yet"));
    QVERIFY(!other.hostSide);
    QVERIFY(other.where.kernel.empty());
    // Values that are not numbers are left out, never guessed.
    const SanitizerFinding& m = parsed->findings[2];
    QVERIFY(!m.where.thread);
    QVERIFY(!m.where.block);
    QCOMPARE(m.where.line, 0);
    QCOMPARE(m.size, std::int64_t(0));
    QCOMPARE(qs(m.where.access), QStringLiteral("read"));
}

void TestSanitizerXml::errors_data()
{
    QTest::addColumn<QByteArray>("xml");
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QString>("why");

    QTest::newRow("empty") << QByteArray() << "memcheck" << "the file is empty";
    QTest::newRow("white space") << QByteArray(" \n\t\n") << "memcheck" << "not well-formed XML";
    QTest::newRow("not XML") << QByteArray("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
                             << "memcheck" << "not well-formed XML";
    QTest::newRow("binary") << QByteArray("\x00\x01<\xff\xfe>", 6) << "memcheck" << "not well-formed XML";
    QTest::newRow("truncated") << QByteArray::fromStdString(fixture("truncated.xml")) << "memcheck"
                               << "not well-formed XML";
    QTest::newRow("wrong root") << QByteArray("<?xml version=\"1.0\"?>\n<html><record/></html>\n") << "memcheck"
                                << "the root element is <html>, not <ComputeSanitizerOutput>";
    QTest::newRow("two roots") << QByteArray("<ComputeSanitizerOutput/><ComputeSanitizerOutput/>") << "memcheck"
                               << "more than one root element";
    QTest::newRow("unknown tool") << QByteArray::fromStdString(fixture("clean.xml")) << "asan"
                                  << "unknown compute-sanitizer tool \"asan\"";
    QByteArray big = "<ComputeSanitizerOutput>";
    big += QByteArray((64 << 20) - big.size() - 25 + 1, ' ');
    big += "</ComputeSanitizerOutput>";
    QTest::newRow("over 64 MiB") << big << "memcheck" << "more than the 64 MiB read";
    QByteArray many = "<ComputeSanitizerOutput>";
    for (int i = 0; i < 100'001; ++i)
        many += "<record/>";
    many += "</ComputeSanitizerOutput>";
    QTest::newRow("over 100 000 records") << many << "racecheck" << "more than 100000 records";
}

void TestSanitizerXml::errors()
{
    QFETCH(QByteArray, xml);
    QFETCH(QString, tool);
    QFETCH(QString, why);
    const auto parsed = sanitize::parseSanitizerXml(std::string_view(xml.constData(), size_t(xml.size())),
                                                    tool.toStdString(), "run/memcheck.xml");
    QVERIFY(!parsed.ok());
    QVERIFY2(qs(parsed.error().why).contains(why), parsed.error().why.c_str());
    QCOMPARE(qs(parsed.error().file), QStringLiteral("run/memcheck.xml"));
}

void TestSanitizerXml::inKernels_data()
{
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<bool>("hostSide");
    QTest::addColumn<QStringList>("expressions");
    QTest::addColumn<bool>("matches");

    QTest::newRow("demangled template") << "void shift_add<float>(const T1 *, T1 *, int)" << false
                                        << QStringList{"shift_add<float>"} << true;
    QTest::newRow("template without parameters") << "shift_add<float>" << false << QStringList{"shift_add<float>"} << true;
    QTest::newRow("parameters") << "block_sum(const float *, float *)" << false << QStringList{"block_sum"} << true;
    QTest::newRow("XML's bare name") << "block_sum" << false << QStringList{"block_sum"} << true;
    QTest::newRow("template with spaces") << "shift_add<float, 4>" << false << QStringList{"shift_add<float,4>"} << true;
    QTest::newRow("spaces in the expression") << "void shift_add<float, 4>(const float *, float *, int)" << false
                                              << QStringList{" shift_add< float , 4 > "} << true;
    QTest::newRow("XML's bare name of a template") << "shift_add" << false << QStringList{"shift_add<float>"} << true;
    QTest::newRow("other instance") << "void shift_add<double>(const T1 *, T1 *, int)" << false
                                    << QStringList{"shift_add<float>"} << false;
    QTest::newRow("second of two") << "add_bias(const float *, const float *, float *, int)" << false
                                   << QStringList{"block_sum", "add_bias"} << true;
    QTest::newRow("prefix is not a match") << "block_sum" << false << QStringList{"block_sum2"} << false;
    QTest::newRow("longer is not a match") << "block_sum2(float *)" << false << QStringList{"block_sum"} << false;
    QTest::newRow("namespace") << "void ns::scale<float>(float *)" << false << QStringList{"ns::scale<float>"} << true;
    QTest::newRow("leading ::") << "scale(float *)" << false << QStringList{"::scale"} << true;
    QTest::newRow("anonymous namespace") << "void (anonymous namespace)::scale(float *)" << false
                                         << QStringList{"scale"} << true;
    QTest::newRow("LibTorch's kernel") << "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, T2, T3)"
                                       << false << QStringList{"block_sum"} << false;
    QTest::newRow("no expressions") << "block_sum" << false << QStringList{} << false;
    QTest::newRow("empty expression") << "block_sum" << false << QStringList{""} << false;
    QTest::newRow("no kernel") << "" << false << QStringList{""} << false;
    QTest::newRow("host side never") << "block_sum" << true << QStringList{"block_sum"} << false;
}

void TestSanitizerXml::inKernels()
{
    QFETCH(QString, kernel);
    QFETCH(bool, hostSide);
    QFETCH(QStringList, expressions);
    QFETCH(bool, matches);
    SanitizerFinding f;
    f.where.kernel = kernel.toStdString();
    f.hostSide = hostSide;
    std::vector<std::string> names;
    for (const QString& e : expressions)
        names.push_back(e.toStdString());
    QCOMPARE(sanitize::findingInKernels(f, names), matches);
}

QTEST_GUILESS_MAIN(TestSanitizerXml)
#include "tst_sanitizerxml.moc"
