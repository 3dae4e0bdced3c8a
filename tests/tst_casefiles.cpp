// A failing case on disk (engine/verify/CaseFiles.h): what the runner saves is what the
// inspector and `kforge verify --repro` read back, and a damaged or hostile case.json is refused
// with the JSON pointer of the field at fault.
#include "engine/verify/Npy.h"
#include "engine/verify/CaseFiles.h"
#include "engine/verify/Compare.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <fstream>

using namespace kf;
using nlohmann::json;

Q_DECLARE_METATYPE(std::vector<unsigned char>)

namespace {

std::vector<unsigned char> bytesOf(const std::vector<float>& v)
{
    std::vector<unsigned char> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::vector<unsigned char> bytesOf(const std::vector<double>& v)
{
    std::vector<unsigned char> b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::vector<unsigned char> bytesOf(const std::vector<std::uint16_t>& v)
{
    std::vector<unsigned char> b(v.size() * 2);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// The case a failing fp16 output `y` of a task with input `x` leaves: shape 3 "tail", trial 1.
struct SampleCase {
    CaseInfo info;
    std::vector<unsigned char> x = bytesOf(std::vector<float>{1, 2, 3, 4, 5, 6});
    std::vector<unsigned char> expected = bytesOf(std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3});
    std::vector<unsigned char> actual0 = bytesOf(std::vector<std::uint16_t>{0x3800, 0x3c00, 0x3e00, 0x4000, 0x7e5a, 0x7e5a});
    std::vector<unsigned char> actual1 = bytesOf(std::vector<std::uint16_t>{0x3800, 0x3c00, 0x3e00, 0x4000, 0x4100, 0x7ea5});
    std::vector<CaseTensorData> tensors;

    explicit SampleCase(bool withRun1 = true)
    {
        info.taskName = "softmax";
        info.taskHash = "b3f1";
        info.candidateFile = "softmax_v2.cu";
        info.sourceHash = "9a9a";
        info.arch = "sm_90";
        info.shape.label = "tail";
        info.shape.values = {{"N", 4099}, {"B", 2}};
        info.set = "held_out";
        info.shapeIndex = 3;
        info.trial = 1;
        info.seed = "0x9f3a";
        info.inputsFrom = "seeded";
        info.distributions = {{"x", "normal(0, 1)"}};
        info.failure = "output y: 2 of 6 elements never written";
        info.environment = {{"gpu", "NVIDIA H100"}, {"driver", "580.1"}};
        CaseOutput y;
        y.name = "y";
        y.dtype = DType::F16;
        y.atolEffective = 1.25e-5;
        y.rtol = 1e-3;
        y.sentinel[0] = sentinelBytes(DType::F16, 0, 7);
        y.sentinel[1] = sentinelBytes(DType::F16, 1, 7);
        y.check = {{"output", "y"}, {"passed", false}, {"unwritten", 2}};
        info.outputs = {y};
        tensors.push_back({{"x", CaseTensor::Role::Input, 0, DType::F32, {2, 3}, {}}, x.data(), x.size()});
        tensors.push_back({{"y", CaseTensor::Role::Expected, 0, DType::F64, {2, 3}, {}}, expected.data(), expected.size()});
        tensors.push_back({{"y", CaseTensor::Role::Actual, 0, DType::F16, {2, 3}, {}}, actual0.data(), actual0.size()});
        if (withRun1)
            tensors.push_back({{"y", CaseTensor::Role::Actual, 1, DType::F16, {2, 3}, {}}, actual1.data(), actual1.size()});
    }
};

// QCOMPARE cannot print nlohmann::json; say both sides when they differ.
#define COMPARE_JSON(actual, expected)                                                              \
    QVERIFY2((actual) == (expected), qPrintable("got " + qs((actual).dump()) + ", want " + qs((expected).dump())))

json readJson(const QString& file)
{
    std::ifstream in(file.toStdString());
    return json::parse(in);
}

void writeText(const QString& file, const std::string& text)
{
    std::ofstream out(file.toStdString(), std::ios::trunc);
    out << text;
}

} // namespace

class TestCaseFiles : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();

    void roundTrip();
    void tensorFilesAreNumpyFiles_data();
    void tensorFilesAreNumpyFiles();
    void failedWriteLeavesNoCaseJson();

    void folderName_data();
    void folderName();

    void readErrors_data();
    void readErrors();
    void missingCaseJsonNamesTheFile();
    void syntaxErrorNamesTheFile();

    void hex_data();
    void hex();
    void hexRoundTripsEveryByte();

private:
    QTemporaryDir m_dir;
    QString m_good;  // a whole case (run 0 only), the base every readErrors row edits
};

void TestCaseFiles::initTestCase()
{
    QVERIFY2(m_dir.isValid(), qPrintable(m_dir.errorString()));
    m_good = m_dir.filePath("good");
    SampleCase s(false);
    KF_VERIFY_OK(writeCase(m_good.toStdString(), s.info, s.tensors));
}

void TestCaseFiles::roundTrip()
{
    SampleCase s;
    const QString dir = m_dir.filePath(qs(caseFolderName(s.info.shapeIndex, s.info.shape, s.info.trial)));
    s.info.trialReport = {{"trial", 1}, {"passed", false}};
    KF_VERIFY_OK(writeCase(dir.toStdString(), s.info, s.tensors));
    QVERIFY(QFile::exists(dir + "/case.json"));

    auto r = readCase(dir.toStdString());
    KF_VERIFY_OK(r);
    const CaseInfo& c = *r;
    QCOMPARE(c.taskName, s.info.taskName);
    QCOMPARE(c.taskHash, s.info.taskHash);
    QCOMPARE(c.candidateFile, s.info.candidateFile);
    QCOMPARE(c.sourceHash, s.info.sourceHash);
    QCOMPARE(c.arch, s.info.arch);
    QCOMPARE(c.shape.label, std::string("tail"));
    QVERIFY(c.shape.values == s.info.shape.values);
    QCOMPARE(c.set, std::string("held_out"));
    QCOMPARE(c.shapeIndex, 3);
    QCOMPARE(c.trial, 1);
    QCOMPARE(c.seed, std::string("0x9f3a"));
    QCOMPARE(c.inputsFrom, std::string("seeded"));
    QCOMPARE(c.failure, s.info.failure);
    COMPARE_JSON(c.distributions, s.info.distributions);
    COMPARE_JSON(c.environment, s.info.environment);
    COMPARE_JSON(c.trialReport, s.info.trialReport);

    // Tensors: the list writeCase made, with files inside the case folder.
    QCOMPARE(c.tensors.size(), size_t(4));
    const std::pair<CaseTensor::Role, int> order[] = {
        {CaseTensor::Role::Input, 0}, {CaseTensor::Role::Expected, 0}, {CaseTensor::Role::Actual, 0}, {CaseTensor::Role::Actual, 1}};
    const char* files[] = {"inputs/x.npy", "expected/y.npy", "actual/y.npy", "actual/y.run1.npy"};
    for (size_t i = 0; i < 4; ++i) {
        QCOMPARE(c.tensors[i].role, order[i].first);
        QCOMPARE(c.tensors[i].run, order[i].second);
        QCOMPARE(c.tensors[i].file, std::string(files[i]));
        QCOMPARE(c.tensors[i].dtype, s.tensors[i].meta.dtype);
        QCOMPARE(c.tensors[i].extents, (std::vector<std::int64_t>{2, 3}));
    }
    QVERIFY(c.find("y", CaseTensor::Role::Actual, 1));
    QCOMPARE(c.find("y", CaseTensor::Role::Actual, 1)->file, std::string("actual/y.run1.npy"));
    QVERIFY(!c.find("x", CaseTensor::Role::Actual));
    QVERIFY(!c.find("z", CaseTensor::Role::Input));

    // Outputs: tolerance, sentinels (through hex) and the runner's check.
    QCOMPARE(c.outputs.size(), size_t(1));
    const CaseOutput* y = c.output("y");
    QVERIFY(y);
    QVERIFY(!c.output("x"));
    QCOMPARE(y->dtype, DType::F16);
    QCOMPARE(y->atolEffective, 1.25e-5);
    QCOMPARE(y->rtol, 1e-3);
    QCOMPARE(y->sentinel[0], sentinelBytes(DType::F16, 0, 7));
    QCOMPARE(y->sentinel[1], sentinelBytes(DType::F16, 1, 7));
    QVERIFY(y->sentinel[0] != y->sentinel[1]);
    COMPARE_JSON(y->check, s.info.outputs[0].check);

    // On disk, the sentinels are hex and the case says what it is.
    const json j = readJson(dir + "/case.json");
    QCOMPARE(j["schema_version"].get<int>(), kCaseSchemaVersion);
    QCOMPARE(j["kind"].get<std::string>(), std::string("kernelforge-case"));
    QCOMPARE(j["outputs"][0]["sentinel_hex"][0].get<std::string>(), std::string("5a7e")); // 0x7e5a, little-endian
    QCOMPARE(j["tensors"][1]["descr"].get<std::string>(), std::string("<f8"));

    // A sentinel left in the actual tensor is still recognised through the case alone.
    auto actual = NpyFile::open((dir + "/actual/y.npy").toStdString());
    KF_VERIFY_OK(actual);
    const auto v = classify(DType::F16, actual->element(4), 2.5, y->sentinel[0].data(), y->atolEffective, y->rtol);
    QCOMPARE(v.cls, ElementClass::Unwritten);
}

void TestCaseFiles::tensorFilesAreNumpyFiles_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("index");  // into SampleCase::tensors
    QTest::newRow("input") << "inputs/x.npy" << int(DType::F32) << 0;
    QTest::newRow("expected is float64") << "expected/y.npy" << int(DType::F64) << 1;
    QTest::newRow("actual run 0") << "actual/y.npy" << int(DType::F16) << 2;
    QTest::newRow("actual run 1") << "actual/y.run1.npy" << int(DType::F16) << 3;
}

void TestCaseFiles::tensorFilesAreNumpyFiles()
{
    QFETCH(QString, file);
    QFETCH(int, dtype);
    QFETCH(int, index);
    SampleCase s;
    const QString dir = m_dir.filePath("npy-check");
    KF_VERIFY_OK(writeCase(dir.toStdString(), s.info, s.tensors));
    const CaseTensorData& t = s.tensors[size_t(index)];
    auto f = NpyFile::open((dir + "/" + file).toStdString());
    KF_VERIFY_OK(f);
    QCOMPARE(f->header().dtype, static_cast<DType>(dtype));
    QCOMPARE(f->header().extents, (std::vector<std::int64_t>{2, 3}));
    QCOMPARE(f->header().dataBytes(), t.bytes);
    QVERIFY2(std::memcmp(f->data(), t.data, t.bytes) == 0, "the saved elements differ from what was handed in");
}

void TestCaseFiles::failedWriteLeavesNoCaseJson()
{
    SampleCase s;
    s.tensors[2].bytes -= 2; // one element short: writeNpy refuses it
    const QString dir = m_dir.filePath("torn");
    auto r = writeCase(dir.toStdString(), s.info, s.tensors);
    QVERIFY(!r.ok());
    QVERIFY2(!QFile::exists(dir + "/case.json"), "case.json marks a whole case; it must not exist after a failed write");
}

void TestCaseFiles::folderName_data()
{
    QTest::addColumn<int>("index");
    QTest::addColumn<QString>("label");
    QTest::addColumn<QStringList>("values");  // "N=4099"
    QTest::addColumn<int>("trial");
    QTest::addColumn<QString>("name");
    QTest::newRow("label and values") << 3 << "tail" << QStringList{"N=4099"} << 0 << "03-tail-N4099-t0";
    QTest::newRow("no label, symbols in name order") << 0 << "" << QStringList{"D=4097", "B=7"} << 2 << "00-B7-D4097-t2";
    QTest::newRow("three-digit index") << 123 << "big" << QStringList{"N=1"} << 4 << "123-big-N1-t4";
    QTest::newRow("label only") << 1 << "scalar" << QStringList{} << 0 << "01-scalar-t0";
    QTest::newRow("unsafe characters replaced") << 5 << "a/b c:*?\\" << QStringList{"N=8"} << 1 << "05-a-b-c-----N8-t1";
    QTest::newRow("dot-dot label stays a plain name") << 6 << ".." << QStringList{"N=8"} << 0 << "06-..-N8-t0";
    QTest::newRow("long name truncated") << 7 << QString(300, 'x') << QStringList{"N=1"} << 9
                                         << "07-" + QString(100, 'x') + "-t9";
}

void TestCaseFiles::folderName()
{
    QFETCH(int, index);
    QFETCH(QString, label);
    QFETCH(QStringList, values);
    QFETCH(int, trial);
    QFETCH(QString, name);
    ShapeBinding b;
    b.label = label.toStdString();
    for (const QString& v : values)
        b.values[v.section('=', 0, 0).toStdString()] = v.section('=', 1).toLongLong();
    const QString got = qs(caseFolderName(index, b, trial));
    QCOMPARE(got, name);
    QVERIFY2(got.size() <= 120, qPrintable(QString("%1 characters").arg(got.size())));
    QVERIFY2(QRegularExpression("^[A-Za-z0-9_.-]+$").match(got).hasMatch(), qPrintable(got));
    QVERIFY(got != "." && got != "..");
}

void TestCaseFiles::readErrors_data()
{
    // Each row edits one field of a good case.json; `value` is JSON text, "<remove>" drops it.
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("phrase");
    QTest::newRow("wrong schema_version") << "/schema_version" << "2" << "/schema_version"
                                          << "schema version 2 is not supported";
    QTest::newRow("tensor file with ..") << "/tensors/0/file" << R"("../../etc/passwd")" << "/tensors/0/file"
                                         << "must be a path inside the case folder";
    QTest::newRow("absolute tensor file") << "/tensors/2/file" << R"("/etc/passwd")" << "/tensors/2/file"
                                          << "must be a path inside the case folder";
    QTest::newRow("bad tensor dtype") << "/tensors/1/dtype" << R"("float128")" << "/tensors/1/dtype"
                                      << "'float128' is not a dtype";
    QTest::newRow("bad output dtype") << "/outputs/0/dtype" << R"("half2")" << "/outputs/0/dtype"
                                      << "'half2' is not a dtype";
    QTest::newRow("bad role") << "/tensors/0/role" << R"("output")" << "/tensors/0/role"
                              << "role must be input, expected, actual or libtorch";
    QTest::newRow("run 2") << "/tensors/2/run" << "2" << "/tensors/2/run" << "run must be 0 or 1";
    QTest::newRow("negative extent") << "/tensors/0/extents/1" << "-3" << "/tensors/0/extents/1" << "must not be negative";
    QTest::newRow("sentinel too short") << "/outputs/0/sentinel_hex/1" << R"("a5")" << "/outputs/0/sentinel_hex/1"
                                        << "one fp16 element in hex (4 digits)";
    QTest::newRow("sentinel not hex") << "/outputs/0/sentinel_hex/0" << R"("zz7e")" << "/outputs/0/sentinel_hex/0"
                                      << "one fp16 element in hex";
    QTest::newRow("one sentinel") << "/outputs/0/sentinel_hex" << R"(["5a7e"])" << "/outputs/0/sentinel_hex"
                                  << "expected two sentinels";
    QTest::newRow("output without an actual tensor") << "/tensors/2/role" << R"("input")" << "/outputs"
                                                     << "output y lacks its expected or actual tensor";
    QTest::newRow("output without an expected tensor") << "/tensors/1/name" << R"("z")" << "/outputs"
                                                       << "output y lacks its expected or actual tensor";
    QTest::newRow("unknown top-level key") << "/verdict" << R"("fail")" << "/verdict" << "unknown key \"verdict\"";
    QTest::newRow("unknown tensor key") << "/tensors/0/strides" << "[3, 1]" << "/tensors/0/strides"
                                        << "unknown key \"strides\"";
    QTest::newRow("shape values not an object") << "/shape/values" << "[4099]" << "/shape/values"
                                                << "must be an object of symbol values";
    QTest::newRow("missing trial") << "/trial" << "<remove>" << "/" << "missing required key \"trial\"";
}

void TestCaseFiles::readErrors()
{
    QFETCH(QString, edit);
    QFETCH(QString, value);
    QFETCH(QString, pointer);
    QFETCH(QString, phrase);
    json j = readJson(m_good + "/case.json");
    const json::json_pointer at(edit.toStdString());
    if (value == "<remove>")
        j[at.parent_pointer()].erase(at.back());
    else
        j[at] = json::parse(value.toStdString());
    const QString dir = m_dir.filePath("bad-" + QString(QTest::currentDataTag()).replace(QRegularExpression("[^a-z0-9]+"), "_"));
    QVERIFY(QDir().mkpath(dir));
    writeText(dir + "/case.json", j.dump(2));

    auto r = readCase(dir.toStdString());
    QVERIFY2(!r.ok(), "the edited case was accepted");
    QCOMPARE(qs(r.error().pointer), pointer);
    QVERIFY2(qs(r.error().why).contains(phrase), r.error().why.c_str());
    QCOMPARE(qs(r.error().file), dir + "/case.json");
    QVERIFY2(qs(r.error().message()).contains("at " + pointer + ": "), r.error().message().c_str());
}

void TestCaseFiles::missingCaseJsonNamesTheFile()
{
    const QString dir = m_dir.filePath("empty-case");
    QVERIFY(QDir().mkpath(dir));
    auto r = readCase(dir.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().file), dir + "/case.json");
    QVERIFY2(qs(r.error().message()).contains("empty-case/case.json"), r.error().message().c_str());
}

void TestCaseFiles::syntaxErrorNamesTheFile()
{
    const QString dir = m_dir.filePath("torn-json");
    QVERIFY(QDir().mkpath(dir));
    writeText(dir + "/case.json", "{\"schema_version\": 1,\n \"task\": {");
    auto r = readCase(dir.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().file), dir + "/case.json");
}

void TestCaseFiles::hex_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<std::vector<unsigned char>>("bytes");
    QTest::newRow("empty") << "" << std::vector<unsigned char>{};
    QTest::newRow("lower case") << "00ff7e5a" << std::vector<unsigned char>{0x00, 0xff, 0x7e, 0x5a};
    QTest::newRow("upper case") << "A5C3" << std::vector<unsigned char>{0xa5, 0xc3};
    QTest::newRow("odd length") << "7e5" << std::vector<unsigned char>{};
    QTest::newRow("not hex") << "zz" << std::vector<unsigned char>{};
    QTest::newRow("bad second digit") << "7g" << std::vector<unsigned char>{};
    QTest::newRow("0x prefix") << "0x7e" << std::vector<unsigned char>{};
    QTest::newRow("spaces") << "7e 5a " << std::vector<unsigned char>{};
    QTest::newRow("minus sign") << "-1" << std::vector<unsigned char>{};
}

void TestCaseFiles::hex()
{
    QFETCH(QString, text);
    QFETCH(std::vector<unsigned char>, bytes);
    QCOMPARE(fromHex(text.toStdString()), bytes);
    if (!bytes.empty())
        QCOMPARE(qs(toHex(bytes)), text.toLower());
}

void TestCaseFiles::hexRoundTripsEveryByte()
{
    std::vector<unsigned char> all(256);
    for (int i = 0; i < 256; ++i)
        all[size_t(i)] = static_cast<unsigned char>(i);
    const std::string h = toHex(all);
    QCOMPARE(h.size(), size_t(512));
    QCOMPARE(h.substr(0, 6), std::string("000102"));
    QCOMPARE(h.substr(506), std::string("fdfeff"));
    QCOMPARE(fromHex(h), all);
}

QTEST_GUILESS_MAIN(TestCaseFiles)
#include "tst_casefiles.moc"
