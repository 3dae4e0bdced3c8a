// An imported problem's reference, round-tripped on CPU LibTorch: each fixture of
// tests/data/import is imported with `kforge import` (a process of its own: libtorch.so exports
// std::filesystem symbols that must not meet the importer's in one program), then the
// runner's own reference path (device/runner/TorchBridge.h) runs the traced reference.pt on the
// sample inputs the importer drew, and must reproduce what eager PyTorch computed from the
// problem's own code (samples/<label>/expected), within the task's tolerance. The float64 golden
// reference must run too, or say why not.
#include "testutil.h"

#include "device/runner/TorchBridge.h"
#include "engine/core/Files.h"
#include "engine/task/Task.h"
#include "engine/verify/Npy.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>

using namespace kf;
using kf::device::RawTensor;
using kf::device::TorchBridge;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An .npy file as float64 values (fp32 and fp16 as stored; the importer stores bf16 as fp32).
std::vector<double> asDouble(const NpyFile& f)
{
    std::vector<double> out(static_cast<size_t>(f.header().elements));
    for (std::int64_t i = 0; i < f.header().elements; ++i) {
        const unsigned char* p = f.element(i);
        switch (f.header().dtype) {
        case DType::F64: { double v; std::memcpy(&v, p, 8); out[i] = v; break; }
        case DType::F32: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
        case DType::I64: { std::int64_t v; std::memcpy(&v, p, 8); out[i] = double(v); break; }
        case DType::I32: { std::int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
        case DType::F16: {
            std::uint16_t h; std::memcpy(&h, p, 2);
            const int e = (h >> 10) & 31, m = h & 1023;
            const double mag = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
            out[i] = (h & 0x8000) ? -mag : mag;
            break;
        }
        default: out[i] = NAN;
        }
    }
    return out;
}

// The bytes of `f` in the task's dtype (bf16 samples were upcast to fp32 by the importer).
std::vector<unsigned char> inDtype(const NpyFile& f, DType want)
{
    const size_t n = static_cast<size_t>(f.header().elements);
    if (f.header().dtype == want)
        return {f.data(), f.data() + f.header().dataBytes()};
    std::vector<unsigned char> out(n * 2);
    for (size_t i = 0; i < n; ++i) {   // fp32 -> bf16, round to nearest even
        float v;
        std::memcpy(&v, f.element(std::int64_t(i)), 4);
        std::uint32_t bits;
        std::memcpy(&bits, &v, 4);
        bits += 0x7fff + ((bits >> 16) & 1);
        const std::uint16_t b = std::uint16_t(bits >> 16);
        std::memcpy(out.data() + 2 * i, &b, 2);
    }
    return out;
}

} // namespace

class TestImportRoundTrip : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void referenceMatchesEager_data();
    void referenceMatchesEager();

private:
    QTemporaryDir m_tmp;
};

void TestImportRoundTrip::initTestCase()
{
    if (std::string(KF_TORCH_PYTHON).empty())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    KF_VERIFY_OK(TorchBridge::init(false));
}

void TestImportRoundTrip::referenceMatchesEager_data()
{
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("dtype");
    QTest::newRow("kernelbench elementwise") << "kernelbench" << "ew_gelu_bias" << "";
    QTest::newRow("kernelbench reduction") << "kernelbench" << "row_sum" << "";
    QTest::newRow("kernelbench linear, weights as inputs") << "kernelbench" << "linear_relu" << "";
    QTest::newRow("kernelbench linear, bf16") << "kernelbench" << "linear_relu" << "bf16";
    QTest::newRow("kernelbench get_init_inputs") << "kernelbench" << "scaled_layernorm" << "";
    QTest::newRow("kernelbench batchnorm MLP") << "kernelbench" << "mlp_batchnorm" << "";
    QTest::newRow("gpumode vector add") << "gpumode" << "vecadd_py" << "";
    QTest::newRow("gpumode row max") << "gpumode" << "rowmax_py" << "";
    QTest::newRow("gpumode preallocated gemm") << "gpumode" << "gemm_prealloc_py" << "";
}

void TestImportRoundTrip::referenceMatchesEager()
{
    QFETCH(QString, format);
    QFETCH(QString, fixture);
    QFETCH(QString, dtype);
    const QString out = m_tmp.filePath(fixture + dtype);
    QStringList args = {"import", format, QString(KF_TEST_DATA_DIR) + "/import/" + format + "/" + fixture
                                                + (format == "kernelbench" ? ".py" : ""),
                        "-o", out, "--python", KF_TORCH_PYTHON};
    if (!dtype.isEmpty())
        args << "--dtype" << dtype;
    QProcess p;
    p.start(KF_KFORGE_BIN, args);
    QVERIFY(p.waitForFinished(300000));
    QVERIFY2(p.exitCode() == 0, qPrintable(p.readAllStandardError()));
    const fs::path taskDir = out.toStdString();
    auto task = loadTask(taskDir);
    KF_VERIFY_OK(task);
    const json record = json::parse(*readFileBytes(taskDir / "imported" / "import.json"));
    QVERIFY(!record["samples"].empty());
    for (const json& sample : record["samples"]) {
        std::vector<std::vector<unsigned char>> storage;
        std::map<std::string, RawTensor> inputs;
        storage.reserve(task->inputs.size());
        for (const TensorSpec& spec : task->inputs) {
            auto f = NpyFile::open(taskDir / sample["inputs"][spec.name].get<std::string>());
            KF_VERIFY_OK(f);
            storage.push_back(inDtype(*f, spec.dtype));
            inputs[spec.name] = RawTensor{storage.back().data(), spec.dtype, f->header().extents, false};
        }
        auto ref = TorchBridge::prepareReference(*task, inputs);
        KF_VERIFY_OK(ref);
        KF_VERIFY_OK((*ref)->run());
        std::string note;
        auto golden = TorchBridge::runGolden(*task, inputs, note);
        if (!golden)
            qInfo("%s: no float64 golden result: %s", qPrintable(fixture), note.c_str());
        for (const TensorSpec& out : task->outputs) {
            auto expectedFile = NpyFile::open(taskDir / sample["expected"][out.name].get<std::string>());
            KF_VERIFY_OK(expectedFile);
            const std::vector<double> expected = asDouble(*expectedFile);
            auto got = (*ref)->resultAsDouble(out.name);
            KF_VERIFY_OK(got);
            QCOMPARE(got->size(), expected.size());
            // LibTorch in C++ and eager PyTorch run the same kernels on the same inputs: equal up
            // to the task's own tolerance (reduction order may differ across the two paths).
            for (size_t i = 0; i < expected.size(); ++i)
                QVERIFY2(std::abs((*got)[i] - expected[i]) <= out.tolerance.atol + out.tolerance.rtol * std::abs(expected[i]),
                         qPrintable(QString("%1 %2[%3]: %4 vs eager %5").arg(fixture, qs(out.name)).arg(i).arg((*got)[i]).arg(expected[i])));
            if (golden) {
                auto g = golden->resultAsDouble(out.name);
                KF_VERIFY_OK(g);
                QCOMPARE(g->size(), expected.size());
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestImportRoundTrip)
#include "tst_importroundtrip.moc"
