// NumPy .npy files (engine/verify/Npy.h): every dtype round-trips, the header is the one NumPy
// writes, anything we cannot read faithfully is refused with a sentence naming the file, and
// what NumPy itself writes (other key orders, version 2.0) is accepted.
#include "engine/verify/Npy.h"
#include "engine/verify/Compare.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cstring>

using namespace kf;

Q_DECLARE_METATYPE(std::vector<std::int64_t>)

namespace {

const DType kAllTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                           DType::I32, DType::I16, DType::I8,  DType::U8,   DType::Bool};

std::int64_t count(const std::vector<std::int64_t>& extents)
{
    std::int64_t n = 1;
    for (auto e : extents)
        n *= e;
    return n;
}

// Distinct bytes per element and position, so a shifted or truncated copy cannot compare equal;
// bool elements stay 0/1 because that is all a bool may hold.
std::vector<unsigned char> pattern(DType t, std::int64_t n)
{
    std::vector<unsigned char> b(static_cast<size_t>(n * dtypeSize(t)));
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = t == DType::Bool ? static_cast<unsigned char>(i % 3 == 0) : static_cast<unsigned char>(i * 37 + 11);
    return b;
}

QString shapeName(const std::vector<std::int64_t>& e)
{
    QStringList parts;
    for (auto x : e)
        parts << QString::number(x);
    return "(" + parts.join(",") + ")";
}

// A .npy file built by hand: magic, version, little-endian header length, the dict padded with
// spaces and ended by '\n' (to a multiple of 64, as NumPy does), then the data.
QByteArray npyBytes(const QByteArray& dict, const QByteArray& data = {}, int major = 1, int minor = 0)
{
    const int lenBytes = major == 1 ? 2 : 4;
    QByteArray header = dict;
    const int unpadded = 8 + lenBytes + header.size() + 1;
    header.append(QByteArray((64 - unpadded % 64) % 64, ' '));
    header.append('\n');
    QByteArray out("\x93NUMPY", 6);
    out.append(char(major));
    out.append(char(minor));
    for (int i = 0; i < lenBytes; ++i)
        out.append(char((header.size() >> (8 * i)) & 0xff));
    return out + header + data;
}

Result<NpyHeader> parseBytes(const QByteArray& b, const std::string& name)
{
    return parseNpyHeader(reinterpret_cast<const unsigned char*>(b.constData()), static_cast<size_t>(b.size()), name);
}

// A file name for the current data row.
QString rowFile(const QString& prefix)
{
    return prefix + "-" + QString(QTest::currentDataTag()).replace(QRegularExpression("[^A-Za-z0-9.]+"), "_") + ".npy";
}

QString python()
{
    // The system interpreter first: packaging/setup.sh installs Debian's python3-numpy for it,
    // while a python3 earlier on PATH (pyenv, a venv) may lack numpy.
    const QByteArray env = qgetenv("KF_PYTHON");
    if (!env.isEmpty())
        return QString::fromLocal8Bit(env);
    return QFileInfo::exists("/usr/bin/python3") ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3");
}

// Runs a Python snippet; empty optional-like result signalled through `ok`.
QByteArray runPython(const QString& script, bool* ok, QString* err)
{
    QProcess p;
    p.start(python(), {"-c", script});
    if (!p.waitForStarted(10000)) {
        *ok = false;
        *err = python() + " could not be started";
        return {};
    }
    p.waitForFinished(60000);
    *ok = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    *err = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
    return p.readAllStandardOutput();
}

} // namespace

class TestNpy : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();

    void roundTrip_data();
    void roundTrip();
    void writeRefusesWrongByteCount();
    void openMissingFileNamesIt();

    void readExpecting_data();
    void readExpecting();

    void rejects_data();
    void rejects();
    void acceptsNumpyVariants_data();
    void acceptsNumpyVariants();

    void numpyReadsOurFiles();
    void weReadNumpyFiles();

private:
    QString path(const QString& name) const { return m_dir.filePath(name); }
    static QString numpyMissing();
    QTemporaryDir m_dir;
};

void TestNpy::initTestCase()
{
    QVERIFY2(m_dir.isValid(), qPrintable(m_dir.errorString()));
}

void TestNpy::roundTrip_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<std::vector<std::int64_t>>("extents");
    const std::vector<std::int64_t> shapes[] = {{}, {5}, {2, 3, 1, 4}, {3, 0, 2}};
    const char* kinds[] = {"0-d", "1-d", "4-d", "empty"};
    for (DType t : kAllTypes)
        for (int s = 0; s < 4; ++s)
            QTest::newRow(qPrintable(QString("%1 %2 %3").arg(qs(std::string(dtypeName(t))), kinds[s], shapeName(shapes[s]))))
                << int(t) << shapes[s];
}

void TestNpy::roundTrip()
{
    QFETCH(int, dtype);
    QFETCH(std::vector<std::int64_t>, extents);
    const DType t = static_cast<DType>(dtype);
    const auto data = pattern(t, count(extents));
    const QString file = path(rowFile("rt"));
    KF_VERIFY_OK(writeNpy(file.toStdString(), t, extents, data.data(), data.size()));

    auto f = NpyFile::open(file.toStdString());
    KF_VERIFY_OK(f);
    const NpyHeader& h = f->header();
    QCOMPARE(h.dtype, t);
    QCOMPARE(h.extents, extents);
    QCOMPARE(h.elements, count(extents));
    QCOMPARE(h.dataBytes(), data.size());
    QVERIFY2(h.dataOffset % 64 == 0, qPrintable(QString("data offset %1 is not a multiple of 64").arg(h.dataOffset)));
    QCOMPARE(QFileInfo(file).size(), qint64(h.dataOffset + data.size()));
    QVERIFY(data.empty() || std::memcmp(f->data(), data.data(), data.size()) == 0);
    if (h.elements > 1)
        QCOMPARE(*f->element(1), data[static_cast<size_t>(dtypeSize(t))]);

    // The header on disk is exactly npyHeaderBytes: magic, version 1.0, its length, '\n' last.
    QFile raw(file);
    QVERIFY(raw.open(QIODevice::ReadOnly));
    const QByteArray head = raw.read(qint64(h.dataOffset));
    const std::string expectedHead = npyHeaderBytes(t, extents);
    QCOMPARE(head, QByteArray(expectedHead.data(), qsizetype(expectedHead.size())));
    QVERIFY(head.startsWith(QByteArray("\x93NUMPY\x01\x00", 8)));
    QCOMPARE(head.back(), '\n');
    QCOMPARE(int(quint8(head[8]) | quint8(head[9]) << 8), int(head.size() - 10));
    QVERIFY2(head.contains("'descr': '" + QByteArray(npyDescr(t).data(), qsizetype(npyDescr(t).size())) + "'"),
             head.constData());
    QVERIFY(head.contains("'fortran_order': False"));

    // The repro path reads the same bytes back through readNpyExpecting.
    auto bytes = readNpyExpecting(file.toStdString(), t, extents);
    KF_VERIFY_OK(bytes);
    QVERIFY(*bytes == data);
}

void TestNpy::writeRefusesWrongByteCount()
{
    const QString file = path("short.npy");
    std::vector<unsigned char> data(12);
    auto r = writeNpy(file.toStdString(), DType::F32, {4}, data.data(), data.size());
    QVERIFY2(!r.ok(), "12 bytes cannot be 4 fp32 elements");
    QVERIFY2(qs(r.error().why).contains("12 bytes do not hold 4 elements of fp32"), r.error().why.c_str());
    QVERIFY2(!QFile::exists(file), "nothing may be written for a refused array");
}

void TestNpy::openMissingFileNamesIt()
{
    const QString file = path("does-not-exist.npy");
    auto f = NpyFile::open(file.toStdString());
    QVERIFY(!f.ok());
    QCOMPARE(qs(f.error().file), file);
    QVERIFY2(qs(f.error().message()).contains("does-not-exist.npy"), f.error().message().c_str());
}

void TestNpy::readExpecting_data()
{
    QTest::addColumn<int>("wantType");
    QTest::addColumn<std::vector<std::int64_t>>("want");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("phrase");
    // The file holds fp32 [4, 6].
    QTest::newRow("same dtype and extents") << int(DType::F32) << std::vector<std::int64_t>{4, 6} << true << "";
    QTest::newRow("transposed extents") << int(DType::F32) << std::vector<std::int64_t>{6, 4} << false
                                        << "it holds fp32 [4, 6] but the task needs fp32 [6, 4]";
    QTest::newRow("flattened, same element count") << int(DType::F32) << std::vector<std::int64_t>{24} << false
                                                   << "it holds fp32 [4, 6] but the task needs fp32 [24]";
    QTest::newRow("other dtype, same size") << int(DType::I32) << std::vector<std::int64_t>{4, 6} << false
                                            << "it holds fp32 [4, 6] but the task needs int32 [4, 6]";
    QTest::newRow("0-d wanted") << int(DType::F32) << std::vector<std::int64_t>{} << false
                                << "but the task needs fp32 []";
}

void TestNpy::readExpecting()
{
    QFETCH(int, wantType);
    QFETCH(std::vector<std::int64_t>, want);
    QFETCH(bool, ok);
    QFETCH(QString, phrase);
    const QString file = path("x-4x6.npy");
    const auto data = pattern(DType::F32, 24);
    KF_VERIFY_OK(writeNpy(file.toStdString(), DType::F32, {4, 6}, data.data(), data.size()));
    auto r = readNpyExpecting(file.toStdString(), static_cast<DType>(wantType), want);
    QCOMPARE(r.ok(), ok);
    if (ok) {
        QVERIFY(*r == data);
        return;
    }
    QVERIFY2(qs(r.error().why).contains(phrase), r.error().why.c_str());
    QCOMPARE(qs(r.error().file), file);
    QVERIFY2(qs(r.error().message()).contains("x-4x6.npy"), r.error().message().c_str());
}

void TestNpy::rejects_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("phrase");
    const QByteArray f4x4(16, '\0');
    const QByteArray good = npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", f4x4);

    QByteArray badMagic = good;
    badMagic[5] = 'X';
    QTest::newRow("bad magic") << badMagic << "magic bytes";
    QTest::newRow("shorter than the magic") << QByteArray("\x93NUM", 4) << "magic bytes";
    QTest::newRow("text file") << QByteArray("descr,shape\nf4,4\n") << "magic bytes";
    QTest::newRow("version 9.0") << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", f4x4, 9, 0)
                                 << "format version 9.0 is not supported";
    QTest::newRow("fortran order")
        << npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", f4x4) << "Fortran order";
    QTest::newRow("big-endian >f4")
        << npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", f4x4) << "dtype '>f4' is not one";
    QTest::newRow("complex <c8")
        << npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", f4x4) << "dtype '<c8' is not one";
    QTest::newRow("uint32 <u4")
        << npyBytes("{'descr': '<u4', 'fortran_order': False, 'shape': (4,), }", f4x4) << "dtype '<u4' is not one";
    QTest::newRow("truncated body") << good.left(good.size() - 4) << "call for 16 data bytes, but it holds 12";
    QTest::newRow("extra bytes after the data") << good + QByteArray(4, '\x7f') << "call for 16 data bytes, but it holds 20";
    QTest::newRow("ends inside the header") << good.left(40) << "ends inside its header";
    QTest::newRow("missing 'shape'") << npyBytes("{'descr': '<f4', 'fortran_order': False, }", f4x4)
                                     << "lacks one of 'descr', 'fortran_order' and 'shape'";
    QTest::newRow("missing 'descr'") << npyBytes("{'fortran_order': False, 'shape': (4,), }", f4x4)
                                     << "lacks one of 'descr', 'fortran_order' and 'shape'";
    QTest::newRow("unknown key")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'align': 8, }", f4x4)
        << "unknown key 'align'";
    QTest::newRow("non-integer extent")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': ('n',), }", f4x4) << "non-negative integers";
    QTest::newRow("negative extent")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", f4x4) << "non-negative integers";
    QTest::newRow("fractional extent")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", f4x4) << "in 'shape'";
    QTest::newRow("shape is a list") << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': [4], }", f4x4)
                                     << "'shape' is not a tuple";
    QTest::newRow("fortran_order not a bool")
        << npyBytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (4,), }", f4x4) << "neither True nor False";
    QTest::newRow("not a dict") << npyBytes("['<f4', False, (4,)]", f4x4) << "does not start with '{'";
    QTest::newRow("too many elements for 64 bits")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }") << "64 bits";
    // 2^61 fp64 elements are 2^64 bytes: the byte count wraps to 0 in size_t, so a file with no
    // data at all would pass the size check and a viewer would read far past the mapping.
    QTest::newRow("byte count overflows size_t")
        << npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }") << "";
}

void TestNpy::rejects()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, phrase);
    const std::string name = "/cases/03-tail-t0/inputs/x.npy";
    auto h = parseBytes(bytes, name);
    QVERIFY2(!h.ok(), h.ok() ? qPrintable(QString("accepted: %1 elements of %2 at offset %3")
                                              .arg(h->elements)
                                              .arg(qs(std::string(dtypeName(h->dtype))))
                                              .arg(h->dataOffset))
                             : "");
    QVERIFY2(qs(h.error().why).contains(phrase), h.error().why.c_str());
    QCOMPARE(h.error().file, name);
    QVERIFY2(qs(h.error().message()).startsWith(qs(name)), h.error().message().c_str());

    // The same bytes on disk are refused by NpyFile::open too, naming the real path.
    const QString file = path(rowFile("bad"));
    QFile out(file);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(bytes);
    out.close();
    auto f = NpyFile::open(file.toStdString());
    QVERIFY(!f.ok());
    QCOMPARE(qs(f.error().file), file);
}

void TestNpy::acceptsNumpyVariants_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<std::vector<std::int64_t>>("extents");
    const QByteArray f4x5(20, '\1');
    QTest::newRow("keys in another order")
        << npyBytes("{'shape': (5,), 'fortran_order': False, 'descr': '<f4'}", f4x5) << int(DType::F32)
        << std::vector<std::int64_t>{5};
    QTest::newRow("no trailing comma")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}", f4x5) << int(DType::F32)
        << std::vector<std::int64_t>{5};
    QTest::newRow("1-tuple without space")
        << npyBytes("{'descr':'<f4','fortran_order':False,'shape':(5,)}", f4x5) << int(DType::F32)
        << std::vector<std::int64_t>{5};
    QTest::newRow("2-tuple without trailing comma")
        << npyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 5)}", f4x5) << int(DType::I16)
        << std::vector<std::int64_t>{2, 5};
    QTest::newRow("0-d: empty tuple") << npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", QByteArray(8, '\0'))
                                      << int(DType::F64) << std::vector<std::int64_t>{};
    QTest::newRow("version 2.0 header")
        << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", f4x5, 2, 0) << int(DType::F32)
        << std::vector<std::int64_t>{5};
    QTest::newRow("double quotes") << npyBytes("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (5,)}", f4x5)
                                   << int(DType::F32) << std::vector<std::int64_t>{5};
    QTest::newRow("numpy bool '|b1'") << npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (20,), }", f4x5)
                                      << int(DType::Bool) << std::vector<std::int64_t>{20};
    QTest::newRow("int8 with '<' mark") << npyBytes("{'descr': '<i1', 'fortran_order': False, 'shape': (20,), }", f4x5)
                                        << int(DType::I8) << std::vector<std::int64_t>{20};
    QTest::newRow("uint16 reads as bf16") << npyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (10,), }", f4x5)
                                          << int(DType::BF16) << std::vector<std::int64_t>{10};
    QTest::newRow("zero extent, no data") << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 7), }")
                                          << int(DType::F32) << std::vector<std::int64_t>{0, 7};
}

void TestNpy::acceptsNumpyVariants()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, dtype);
    QFETCH(std::vector<std::int64_t>, extents);
    auto h = parseBytes(bytes, "variant.npy");
    KF_VERIFY_OK(h);
    QCOMPARE(h->dtype, static_cast<DType>(dtype));
    QCOMPARE(h->extents, extents);
    QCOMPARE(h->elements, count(extents));
    QCOMPARE(qsizetype(h->dataOffset + h->dataBytes()), bytes.size());
    QCOMPARE(bytes[qsizetype(h->dataOffset) - 1], '\n');
}

// Why numpy cannot be used, or empty when it can.
QString TestNpy::numpyMissing()
{
    bool ok = false;
    QString err;
    runPython("import numpy", &ok, &err);
    return ok ? QString() : "numpy is not importable by " + python() + " (set KF_PYTHON to another interpreter): " +
                                err.section('\n', -1);
}

void TestNpy::numpyReadsOurFiles()
{
    if (const QString why = numpyMissing(); !why.isEmpty())
        QSKIP(qPrintable(why));
    // Values every dtype holds exactly; fp16 and bf16 go as their bits.
    struct Case {
        DType t;
        std::vector<std::int64_t> extents;
        std::vector<double> values;
    };
    const std::vector<Case> cases = {
        {DType::F64, {2, 3}, {0.1, -2.5, 1e300, 0, -0.0, 3}},
        {DType::F32, {3}, {1.5, -0.25, 1048576}},
        {DType::F16, {2, 2}, {1, -2, 65504, 0.5}},
        {DType::BF16, {2}, {0x3f80, 0xbf00}}, // raw bits, read by numpy as uint16
        {DType::I64, {2}, {-9007199254740991.0, 42}},
        {DType::I32, {1, 1, 3}, {-2147483648.0, 0, 2147483647}},
        {DType::I16, {2}, {-32768, 32767}},
        {DType::I8, {3}, {-128, 0, 127}},
        {DType::U8, {2}, {0, 255}},
        {DType::Bool, {3}, {1, 0, 1}},
        {DType::F32, {}, {7.0}},
        {DType::F32, {2, 0}, {}},
    };
    nlohmann::json expected = nlohmann::json::array();
    QStringList files;
    for (size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        std::vector<unsigned char> b(c.values.size() * static_cast<size_t>(dtypeSize(c.t)));
        for (size_t i = 0; i < c.values.size(); ++i) {
            unsigned char* p = b.data() + i * static_cast<size_t>(dtypeSize(c.t));
            auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
            const double v = c.values[i];
            switch (c.t) {
            case DType::F64: put(v); break;
            case DType::F32: put(float(v)); break;
            case DType::F16: put(std::uint16_t(v == 1 ? 0x3c00 : v == -2 ? 0xc000 : v == 65504 ? 0x7bff : 0x3800)); break;
            case DType::BF16: put(std::uint16_t(v)); break;
            case DType::I64: put(std::int64_t(v)); break;
            case DType::I32: put(std::int32_t(v)); break;
            case DType::I16: put(std::int16_t(v)); break;
            case DType::I8: put(std::int8_t(v)); break;
            case DType::U8: put(std::uint8_t(v)); break;
            case DType::Bool: put(std::uint8_t(v)); break;
            }
        }
        const QString file = path(QString("ours-%1.npy").arg(k));
        KF_VERIFY_OK(writeNpy(file.toStdString(), c.t, c.extents, b.data(), b.size()));
        files << file;
        expected.push_back({{"descr", npyDescr(c.t)}, {"shape", c.extents}, {"values", c.values}});
    }
    const QString script = QString(R"(
import json, sys, numpy as np
out = []
for f in sys.argv[1:]:
    a = np.load(f, mmap_mode="r")
    out.append({"descr": a.dtype.str, "shape": list(a.shape), "c": bool(a.flags.c_contiguous),
                "values": [float(x) for x in np.asarray(a, dtype=np.float64).ravel()]})
print(json.dumps(out))
)");
    QProcess p;
    p.start(python(), QStringList{"-c", script} + files);
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const auto got = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
    QCOMPARE(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
        const QString where = files[qsizetype(k)];
        QVERIFY2(got[k]["c"].get<bool>(), qPrintable(where));
        QVERIFY2(got[k]["shape"] == expected[k]["shape"], qPrintable(where + ": shape " + qs(got[k]["shape"].dump())));
        // numpy names bool "|b1", int8 "|i1", uint8 "|u1", as we write them.
        QVERIFY2(got[k]["descr"] == expected[k]["descr"], qPrintable(where + ": descr " + qs(got[k]["descr"].dump())));
        QVERIFY2(got[k]["values"] == expected[k]["values"], qPrintable(where + ": values " + qs(got[k]["values"].dump())));
    }
}

void TestNpy::weReadNumpyFiles()
{
    if (const QString why = numpyMissing(); !why.isEmpty())
        QSKIP(qPrintable(why));
    // numpy writes arange(n) in each dtype (bool: odd positions True), plus a version-2.0 file.
    const QString dir = m_dir.filePath("numpy-written");
    QVERIFY(QDir().mkpath(dir));
    const QString script = QString(R"(
import sys, numpy as np
d = sys.argv[1]
specs = [("f8", (2, 3)), ("f4", (4,)), ("f2", (1, 2, 3)), ("u2", (5,)), ("i8", (3,)), ("i4", (2, 2)),
         ("i2", (3,)), ("i1", (4,)), ("u1", (4,)), ("?", (5,)), ("f4", ()), ("f4", (3, 0))]
for k, (t, shape) in enumerate(specs):
    n = int(np.prod(shape))
    a = (np.arange(n) % 2).astype(t) if t == "?" else np.arange(n).astype("<" + t if t not in ("i1", "u1") else t)
    np.save("%s/np-%d.npy" % (d, k), a.reshape(shape))
with open(d + "/np-v2.npy", "wb") as f:
    np.lib.format.write_array(f, np.arange(6, dtype="<f4").reshape(2, 3), version=(2, 0))
)");
    QProcess p;
    p.start(python(), {"-c", script, dir});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());

    struct Want {
        QString file;
        DType t;
        std::vector<std::int64_t> extents;
    };
    const std::vector<Want> wants = {
        {"np-0", DType::F64, {2, 3}},  {"np-1", DType::F32, {4}},   {"np-2", DType::F16, {1, 2, 3}},
        {"np-3", DType::BF16, {5}},    {"np-4", DType::I64, {3}},   {"np-5", DType::I32, {2, 2}},
        {"np-6", DType::I16, {3}},     {"np-7", DType::I8, {4}},    {"np-8", DType::U8, {4}},
        {"np-9", DType::Bool, {5}},    {"np-10", DType::F32, {}},   {"np-11", DType::F32, {3, 0}},
        {"np-v2", DType::F32, {2, 3}},
    };
    for (const Want& w : wants) {
        const QString file = dir + "/" + w.file + ".npy";
        auto f = NpyFile::open(file.toStdString());
        KF_VERIFY_OK(f);
        QCOMPARE(f->header().dtype, w.t);
        QCOMPARE(f->header().extents, w.extents);
        for (std::int64_t i = 0; i < f->header().elements; ++i) {
            double v = 0;
            if (w.t == DType::BF16) { // numpy wrote the integers as uint16: compare the raw bits
                std::uint16_t bits = 0;
                std::memcpy(&bits, f->element(i), 2);
                v = bits;
            } else {
                toDouble(w.t, f->element(i), 1, &v);
            }
            const double want = w.t == DType::Bool ? double(i % 2) : double(i);
            QVERIFY2(v == want, qPrintable(QString("%1[%2] = %3, numpy wrote %4").arg(w.file).arg(i).arg(v).arg(want)));
        }
    }
}

QTEST_GUILESS_MAIN(TestNpy)
#include "tst_npy.moc"
