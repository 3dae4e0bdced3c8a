// The C++ runtime of .cast packages (device/cast/cpp, kf_cast) in a LibTorch program: it loads
// the package tst_cast exports, registers cast:: operators with the dispatcher, runs them on CPU
// tensors (their reference ops), propagates shapes through Meta tensors, checks arguments, and
// serves TorchScript callers. The CUDA path runs on the GPU server (tests/gpu/cast_e2e.py).
// LibTorch first, and Qt without its `slots`/`signals` keywords (QT_NO_KEYWORDS): LibTorch's
// headers use both names.
#include <kf_cast/kf_cast.h>
#include <kf_cast/kf_cast_model.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/script.h>

#include "testutil.h"

#include <QTest>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

class TestCastRuntime : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void registersEveryOp();
    void cpuCallsRunTheReference();
    void metaTensorsPropagateShapes();
    void argumentsAreCheckedAndNamed_data();
    void argumentsAreCheckedAndNamed();
    void torchScriptCallsTheOp();
    void loadingTwiceAndThroughTheDispatcher();
    void damagedPackageIsRefused();
    void imageChoice_data();
    void imageChoice();
    void fallbackIsOptInAndCounted();
    void torchScriptModelIsSubstituted();

private:
    std::string m_fixture;
    std::shared_ptr<const kf_cast::Package> m_pkg;
};

void TestCastRuntime::initTestCase()
{
    m_fixture = std::string(KF_CAST_FIXTURE_DIR) + "/fixture.cast";
    if (!fs::exists(m_fixture))
        QSKIP("needs the package tst_cast exports (run tst_cast first; CTest does)");
    m_pkg = kf_cast::load(m_fixture);
    QVERIFY(m_pkg);
}

void TestCastRuntime::registersEveryOp()
{
    QCOMPARE(m_pkg->ops().size(), size_t(2));
    QCOMPARE(qs(m_pkg->ops()[0].name), QString("vector_add"));
    QVERIFY(qs(m_pkg->ops()[0].evidenceJson).contains("geomean_speedup"));
    auto& d = c10::Dispatcher::singleton();
    QVERIFY(d.findSchema({"cast::vector_add", ""}).has_value());
    QVERIFY(d.findSchema({"cast::fused_add_rms_norm_fp16", ""}).has_value());
    QCOMPARE(qs(toString(d.findSchema({"cast::vector_add", ""})->schema())),
             QString("cast::vector_add(Tensor a, Tensor b) -> Tensor"));
}

void TestCastRuntime::cpuCallsRunTheReference()
{
    auto add = c10::Dispatcher::singleton().findSchemaOrThrow("cast::vector_add", "").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
    at::Tensor a = at::randn({1000}), b = at::randn({1000});
    QVERIFY(at::equal(add.call(a, b), a + b));

    auto fused = c10::Dispatcher::singleton()
                     .findSchemaOrThrow("cast::fused_add_rms_norm_fp16", "")
                     .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
    at::Tensor x = at::randn({5, 97}).to(at::kHalf), r = at::randn({5, 97}).to(at::kHalf), w = at::randn({97}).to(at::kHalf);
    auto [y, h] = fused.call(x, r, w);
    at::Tensor hRef = x + r;
    QVERIFY(at::equal(h, hRef));
    QVERIFY(at::equal(y, at::rms_norm(hRef, {97}, w, 1e-6)));
    QCOMPARE(y.scalar_type(), at::kHalf);
}

void TestCastRuntime::metaTensorsPropagateShapes()
{
    auto fused = c10::Dispatcher::singleton()
                     .findSchemaOrThrow("cast::fused_add_rms_norm_fp16", "")
                     .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
    auto meta = at::TensorOptions().device(at::kMeta).dtype(at::kHalf);
    auto [y, h] = fused.call(at::empty({7, 4099}, meta), at::empty({7, 4099}, meta), at::empty({4099}, meta));
    QVERIFY(y.is_meta());
    QCOMPARE(y.sizes().vec(), (std::vector<int64_t>{7, 4099}));
    QCOMPARE(h.scalar_type(), at::kHalf);
}

void TestCastRuntime::argumentsAreCheckedAndNamed_data()
{
    QTest::addColumn<int>("row");
    QTest::addColumn<QString>("message");
    QTest::newRow("dtype") << 0 << "argument 'a' is Half; the kernel takes fp32";
    QTest::newRow("symbol disagrees") << 1 << "argument 'b' has N=9 at dim 0, but 'a' gave N=8";
    QTest::newRow("rank") << 2 << "argument 'a' has 2 dimension(s)";
    QTest::newRow("range") << 3 << "N=0 (from argument 'a') is outside the range";
}

void TestCastRuntime::argumentsAreCheckedAndNamed()
{
    QFETCH(int, row);
    QFETCH(QString, message);
    auto add = c10::Dispatcher::singleton().findSchemaOrThrow("cast::vector_add", "").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
    std::vector<std::pair<at::Tensor, at::Tensor>> rows = {
        {at::randn({8}).to(at::kHalf), at::randn({8}).to(at::kHalf)},
        {at::randn({8}), at::randn({9})},
        {at::randn({2, 4}), at::randn({2, 4})},
        {at::randn({0}), at::randn({0})},
    };
    try {
        add.call(rows[static_cast<size_t>(row)].first, rows[static_cast<size_t>(row)].second);
        QFAIL("the call must be refused");
    } catch (const c10::ValueError& e) {
        const QString text = QString::fromStdString(e.what_without_backtrace());
        QVERIFY2(text.contains(message), qPrintable(text));
        QVERIFY(text.contains("cast::vector_add"));
    }
}

void TestCastRuntime::torchScriptCallsTheOp()
{
    // A TorchScript graph naming the operator, as a module scripted in Python and saved would hold.
    auto graph = std::make_shared<torch::jit::Graph>();
    torch::jit::parseIR(R"IR(
graph(%a : Tensor, %b : Tensor):
  %c : Tensor = cast::vector_add(%a, %b)
  %d : Tensor = cast::vector_add(%c, %c)
  return (%d)
)IR",
                        graph.get());
    torch::jit::GraphFunction fn("f", graph, nullptr);
    at::Tensor a = at::randn({33}), b = at::randn({33});
    at::Tensor got = fn({a, b}).toTensor();
    QVERIFY(at::equal(got, (a + b) + (a + b)));
}

void TestCastRuntime::loadingTwiceAndThroughTheDispatcher()
{
    QCOMPARE(kf_cast::load(m_fixture).get(), m_pkg.get());
    auto load = c10::Dispatcher::singleton().findSchemaOrThrow("kf_cast::load", "")
                    .typed<std::vector<std::string>(std::string, bool, std::string)>();
    std::vector<std::string> names = load.call(m_fixture, true, "");
    QCOMPARE(names, (std::vector<std::string>{"vector_add", "fused_add_rms_norm_fp16"}));
    // The same ops with other options would be other kernels under taken names.
    try {
        kf_cast::load(m_fixture, {false, ""});
        QFAIL("another op under a taken name must be refused");
    } catch (const std::runtime_error& e) {
        QVERIFY2(QString(e.what()).contains("already registered"), e.what());
    }
}

void TestCastRuntime::damagedPackageIsRefused()
{
    const std::string bad = std::string(KF_CAST_FIXTURE_DIR) + "/truncated.cast";
    {
        std::ifstream in(m_fixture, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    }
    try {
        kf_cast::load(bad);
        QFAIL("a damaged package must be refused");
    } catch (const std::runtime_error& e) {
        QVERIFY2(QString(e.what()).contains("truncated.cast"), e.what());
    }
}

void TestCastRuntime::imageChoice_data()
{
    QTest::addColumn<QStringList>("images");
    QTest::addColumn<int>("major");
    QTest::addColumn<int>("minor");
    QTest::addColumn<QString>("chosen");
    const QStringList full{"sm_80", "sm_86", "sm_89", "sm_90", "compute_80"};
    QTest::newRow("exact") << full << 9 << 0 << "sm_90";
    QTest::newRow("same major, lower minor") << full << 8 << 7 << "sm_86";
    QTest::newRow("later major: PTX") << full << 10 << 0 << "compute_80";
    QTest::newRow("sm_80 only on sm_90: PTX") << QStringList{"sm_80", "compute_80"} << 9 << 0 << "compute_80";
    QTest::newRow("older GPU: none") << full << 7 << 5 << "";
}

void TestCastRuntime::imageChoice()
{
    QFETCH(QStringList, images);
    QFETCH(int, major);
    QFETCH(int, minor);
    QFETCH(QString, chosen);
    std::vector<std::string> v;
    for (const QString& s : images)
        v.push_back(s.toStdString());
    QCOMPARE(qs(kf_cast::chooseImage(v, major, minor)), chosen);
}

void TestCastRuntime::fallbackIsOptInAndCounted()
{
    auto add = c10::Dispatcher::singleton().findSchemaOrThrow("cast::vector_add", "").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
    // fp64 where the kernel takes fp32: the op refuses the call.
    at::Tensor a = at::randn({5}), b = at::randn({5}, at::kDouble);
    const auto before = m_pkg->fallbacks();
    try {
        add.call(a, b);
        QFAIL("a refused call is an error while fallback is off");
    } catch (const c10::Error& e) {
        QVERIFY2(QString(e.what()).contains("the kernel takes fp32"), e.what());
    }
    m_pkg->allowFallback(true);
    at::Tensor got = add.call(a, b);
    add.call(a, b);
    m_pkg->allowFallback(false);
    QVERIFY(at::allclose(got, (a + b).to(at::kFloat)));
    const auto after = m_pkg->fallbacks();
    QCOMPARE(after[0].first, std::string("vector_add"));
    QCOMPARE(after[0].second - before[0].second, 2LL);   // every fallen-back call counted
    QCOMPARE(after[1].second, before[1].second);
}

void TestCastRuntime::torchScriptModelIsSubstituted()
{
    const std::string file = std::string(KF_CAST_FIXTURE_DIR) + "/model.cast";
    if (!fs::exists(file))
        QSKIP("needs the model package tst_cast exports with the toy models (CTest fixture cast_models)");
    auto pkg = kf_cast::load(file);
    const auto names = kf_cast::models(*pkg);
    QCOMPARE(names.size(), size_t(3));
    QVERIFY(names[2] == std::make_pair(std::string("toy16ts"), std::string("torchscript")));
    try {
        kf_cast::loadModel(*pkg, "toy16", at::kCPU);
        QFAIL("a torch.export program is the Python runtime's");
    } catch (const std::runtime_error& e) {
        QVERIFY2(QString(e.what()).contains("python -m kernelforge_cast run"), e.what());
    }
    torch::jit::Module model = kf_cast::loadModel(*pkg, "toy16ts", at::kCPU);
    std::vector<c10::IValue> inputs = kf_cast::modelInputs(*pkg, "toy16ts", at::kCPU, 7);
    QCOMPARE(inputs.size(), size_t(2));
    const at::Tensor ids = inputs[0].toTensor();
    QCOMPARE(ids.scalar_type(), at::kLong);
    QVERIFY(ids.min().item<std::int64_t>() >= 0 && ids.max().item<std::int64_t>() < 96);
    QCOMPARE(inputs[1].toTensor().scalar_type(), at::kHalf);

    kf_cast::Substituted s = kf_cast::substitute(*pkg, model, inputs);
    std::map<std::string, const kf_cast::Site*> byOp;
    for (const kf_cast::Site& site : s.report)
        byOp[site.op + "/" + site.status] = &site;
    QCOMPARE(s.report.size(), size_t(4));
    QVERIFY(byOp.count("add/substituted") && byOp.count("rms_norm/substituted"));
    QCOMPARE(qs(byOp["rms_norm/substituted"]->castOp), QString("fused_add_rms_norm_fp16"));
    QVERIFY(byOp.count("gelu/kept") && byOp.count("softmax/kept"));
    QCOMPARE(qs(byOp["softmax/kept"]->reason), QString("no packaged kernel implements softmax"));
    const std::string graph = s.module.get_method("forward").graph()->toString();
    QVERIFY2(graph.find("cast::fused_add_rms_norm_fp16") != std::string::npos, graph.c_str());
    QVERIFY2(graph.find("aten::rms_norm") == std::string::npos, graph.c_str());
    QVERIFY(model.get_method("forward").graph()->toString().find("cast::") == std::string::npos);   // the original is untouched

    // On CPU the op runs its reference ops: the substituted model computes exactly what the model does.
    torch::NoGradGuard noGrad;
    const auto want = model.forward(inputs).toTupleRef().elements();
    const auto got = s.module.forward(inputs).toTupleRef().elements();
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        QVERIFY(at::equal(got[i].toTensor(), want[i].toTensor()));

    // fp32 inputs: the kernel is fp16, so nothing matches, and each site says why.
    torch::jit::Module model2 = kf_cast::loadModel(*pkg, "toy16ts", at::kCPU);
    model2.to(at::kFloat);
    std::vector<c10::IValue> fp32 = {inputs[0], inputs[1].toTensor().to(at::kFloat)};
    kf_cast::Substituted none = kf_cast::substitute(*pkg, model2, fp32);
    for (const kf_cast::Site& site : none.report) {
        QCOMPARE(qs(site.status), QString("kept"));
        if (site.op == "rms_norm")
            QVERIFY2(qs(site.reason).contains("the kernel takes fp16"), site.reason.c_str());
    }
}

QTEST_GUILESS_MAIN(TestCastRuntime)
#include "tst_castruntime.moc"
