// .cast packages: export from a registry for four architectures, inspect and check through the
// CLI, and every kind of malformed or forged archive refused with the entry named. The package
// exported here is also the fixture of tests/cast/test_cast_runtime.py (the Python runtime).
#include "registryfixture.h"
#include "testutil.h"

#include "engine/cast/CastArchive.h"
#include "engine/cast/CastExport.h"
#include "engine/cast/CastPackage.h"
#include "engine/cast/ModelRuns.h"
#include "engine/core/Files.h"
#include "engine/core/Hmac.h"
#include "engine/compile/Compiler.h"
#include "engine/task/Expr.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <zip.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace kf;

Q_DECLARE_METATYPE(std::function<void(std::vector<kf::cast::ArchiveEntry>&)>)

namespace {

struct Run {
    int exitCode = -1;
    QString out, err;
};

Run kforge(const QStringList& args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("KF_REGISTRY");
    p.setProcessEnvironment(env);
    p.start(KF_KFORGE_BIN, args);
    if (!p.waitForFinished(300000))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

/// Writes a zip with exactly these entries, names unchecked, optionally with a Unix mode, so a
/// test can make what `writeArchive` never would.
void writeRawZip(const fs::path& file, const std::vector<std::tuple<std::string, std::string, unsigned>>& entries)
{
    int err = 0;
    fs::remove(file);
    zip_t* za = zip_open(file.c_str(), ZIP_CREATE | ZIP_EXCL, &err);
    QVERIFY(za);
    for (const auto& [name, bytes, mode] : entries) {
        zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
        const zip_int64_t i = zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_RAW);
        QVERIFY2(i >= 0, name.c_str());
        if (mode)
            zip_file_set_external_attributes(za, static_cast<zip_uint64_t>(i), 0, ZIP_OPSYS_UNIX, mode << 16);
    }
    QCOMPARE(zip_close(za), 0);
}

Json manifestOf(const std::vector<cast::ArchiveEntry>& entries) { return Json::parse(entries.front().bytes); }
void setManifest(std::vector<cast::ArchiveEntry>& entries, const Json& m) { entries.front().bytes = m.dump(2); }

/// Updates the manifest's size and hash of `path` after a test changed its bytes (a forger who
/// fixes up the manifest as well).
void rehash(std::vector<cast::ArchiveEntry>& entries, const std::string& path)
{
    Json m = manifestOf(entries);
    for (auto& e : entries)
        if (e.name == path)
            for (auto& f : m["files"])
                if (f["path"] == path) {
                    f["sha256"] = sha256Hex(e.bytes).value();
                    f["bytes"] = e.bytes.size();
                }
    setManifest(entries, m);
}

/// Rewrites the zip held in entry `path` (a model inside a package) with `edit` applied to its
/// entries, and fixes up the package manifest's hash as a forger would.
void editNested(std::vector<cast::ArchiveEntry>& entries, const std::string& path,
                const std::function<void(std::vector<cast::ArchiveEntry>&)>& edit, const fs::path& scratch)
{
    for (auto& e : entries) {
        if (e.name != path)
            continue;
        auto inner = cast::readArchiveBytes(e.bytes, path);
        QVERIFY(inner);
        edit(inner->entries);
        QVERIFY(cast::writeArchive(scratch, inner->entries));
        std::ifstream in(scratch, std::ios::binary);
        e.bytes.assign(std::istreambuf_iterator<char>(in), {});
        rehash(entries, path);
        return;
    }
    QFAIL(("no entry " + path).c_str());
}

cast::ArchiveEntry& innerEntry(std::vector<cast::ArchiveEntry>& es, const std::string& suffix)
{
    for (auto& e : es)
        if (e.name.size() >= suffix.size() && e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) == 0)
            return e;
    throw std::runtime_error("no entry ending in " + suffix);
}

} // namespace

class TestCast : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void exportFourArchitecturesAndPtx();
    void cliInspectAndCheck();
    void cliRunOnCpu_data();
    void cliRunOnCpu();
    void exportRefusals_data();
    void exportRefusals();
    void tamperedPackagesAreRejected_data();
    void tamperedPackagesAreRejected();
    void hostileArchivesAreRejected_data();
    void hostileArchivesAreRejected();
    void limitsBoundEntriesAndSizes();
    void expressionTreesMatchTheSharedVectors();
    void opNames_data();
    void opNames();
    void modelPackageExport();
    void modelPackagesRefused_data();
    void modelPackagesRefused();
    void modelExportRefusals_data();
    void modelExportRefusals();
    void modelRunsAreRecorded();
    void modelRunHeadline_data();
    void modelRunHeadline();

private:
    /// The toy models tests/cast/make_toy_models.py wrote (CTest fixture cast_models), or skip.
    bool haveToyModels() const
    {
        return fs::exists(m_models / "toy_fp16.pt2") && fs::exists(m_models / "toy_fp32.pt2") && fs::exists(m_models / "toy_fp16.ts");
    }
    fs::path m_models;
    fs::path m_modelPackage;
    std::vector<cast::ArchiveEntry> m_modelGood;
    QTemporaryDir m_tmp;
    fs::path m_registry;
    std::vector<std::string> m_ids;
    fs::path m_package;
    std::vector<cast::ArchiveEntry> m_good;
};

void TestCast::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    const fs::path root = m_tmp.path().toStdString();
    m_registry = root / "registry";
    const Registry reg(m_registry);
    // Two examples: a one-op task with a templated kernel, a two-output tape with parameters.
    for (const char* example : {"vector_add", "fused_add_rms_norm_fp16"}) {
        const fs::path task = test::copyExample(example, root / "tasks");
        PromotionInput in = test::passingInput(task, "optimized.cu", {1.25, 1.4});
        // The fused op was also compared with torch.compile: its evidence carries that too, and
        // every reader (C++ here, Python and kf_cast in their tests) must take it.
        if (std::string(example) == "fused_add_rms_norm_fp16")
            in.performance = test::asReport(test::withCompile(test::performanceFor(in.task, "optimized.cu", {1.25, 1.4}), 0.95));
        auto out = reg.promote(in);
        KF_VERIFY_OK(out);
        QVERIFY2(out->entry, out->gates.sentence().c_str());
        m_ids.push_back(out->entry->id);
    }
    auto nvrtc = nvrtcVersion();
    if (!nvrtc)
        QSKIP(("export needs NVRTC: " + nvrtc.error().message()).c_str());
    m_package = fs::path(KF_CAST_FIXTURE_DIR) / "fixture.cast";
    fs::create_directories(m_package.parent_path());
    cast::ExportOptions o;
    o.ids = m_ids;
    o.kernelforgeVersion = "test";
    auto done = cast::exportPackage(reg, o, m_package);
    KF_VERIFY_OK(done);
    auto archive = cast::readArchive(m_package);
    KF_VERIFY_OK(archive);
    m_good = archive->entries;

    // The model package the Python runtime's model tests load: both toy models, the fp16 one
    // with an input description, the fp32 one with the program's own sample inputs.
    m_models = fs::path(KF_CAST_FIXTURE_DIR) / "models";
    m_modelPackage = fs::path(KF_CAST_FIXTURE_DIR) / "model.cast";
    if (haveToyModels()) {
        cast::ExportOptions mo = o;
        mo.models = {{m_models / "toy_fp16.pt2", "toy16", m_models / "toy_fp16_inputs.json"},
                     {m_models / "toy_fp32.pt2", "toy32", {}},
                     {m_models / "toy_fp16.ts", "toy16ts", m_models / "toy_fp16_inputs.json"}};
        auto withModels = cast::exportPackage(reg, mo, m_modelPackage);
        KF_VERIFY_OK(withModels);
        auto a = cast::readArchive(m_modelPackage);
        KF_VERIFY_OK(a);
        m_modelGood = a->entries;
    }
}

void TestCast::exportFourArchitecturesAndPtx()
{
    auto pkg = cast::openPackage(m_package);
    KF_VERIFY_OK(pkg);
    QCOMPARE(pkg->ops.size(), size_t(2));
    QCOMPARE(qs(pkg->ops[0].name), QString("vector_add"));
    QCOMPARE(qs(pkg->ops[1].name), QString("fused_add_rms_norm_fp16"));
    QCOMPARE(qs(pkg->ops[1].schema),
             QString("fused_add_rms_norm_fp16(Tensor x, Tensor residual, Tensor w) -> (Tensor, Tensor)"));
    const Json& m = pkg->manifest;
    QVERIFY(m["architectures"] == Json({"sm_80", "sm_86", "sm_89", "sm_90"}));
    QVERIFY(m["ptx"] == Json("compute_80"));
    for (const auto& op : pkg->ops) {
        QCOMPARE(op.images.size(), size_t(5));
        for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
            const auto* cubin = pkg->file(op.json["images"][arch].get<std::string>());
            QVERIFY(cubin);
            QVERIFY2(cubin->bytes.rfind("\x7f" "ELF", 0) == 0, "a cubin is an ELF image");
        }
        const auto* ptx = pkg->file(op.json["images"]["compute_80"].get<std::string>());
        QVERIFY(ptx && ptx->bytes.find(".target sm_80") != std::string::npos);
        // Every lowered name is the one NVRTC gave, and it is in the cubin.
        for (const auto& l : op.json["launches"]) {
            const std::string lowered = l["lowered"];
            QVERIFY2(!lowered.empty(), l["kernel"].dump().c_str());
            QVERIFY(pkg->file(op.json["images"]["sm_90"].get<std::string>())->bytes.find(lowered) != std::string::npos);
        }
        // The evidence travels: reports, the signed record and the numbers the gates judged.
        const Json& ev = op.json["evidence"];
        QVERIFY(pkg->file(ev["promotion"].get<std::string>()));
        QVERIFY(ev["gpu"] == Json(test::kFixtureGpu));
        QVERIFY(ev["geomean_speedup"].get<double>() > 1.25);
        if (op.name == "fused_add_rms_norm_fp16")
            QVERIFY2(std::abs(ev.value("compile_speedup", 0.0) - 0.95) < 1e-9, ev.dump().c_str());
        else
            QVERIFY2(!ev.contains("compile_speedup"), ev.dump().c_str());   // not compared: not written
        QVERIFY2(ev["registry_signature"].get<std::string>().rfind("signed", 0) == 0,
                 ev["registry_signature"].dump().c_str());
    }
    // Parameters and launch-plan expressions as trees a runtime can evaluate without a parser.
    const Json& fused = pkg->ops[1].json;
    QVERIFY(fused["parameters"]["eps"] == Json(1e-6));
    // The plan names the candidate's defines (its tune space): their values travel as parameters.
    QVERIFY(fused["launches"][0]["grid"][0]["text"] == Json("ceil_div(B, WARPS_PER_BLOCK)"));
    QVERIFY(fused["launches"][0]["grid"][0]["tree"] ==
            Json::parse(R"({"call": "ceil_div", "args": [{"sym": "B"}, {"sym": "WARPS_PER_BLOCK"}]})"));
    QVERIFY2(fused["parameters"]["WARPS_PER_BLOCK"] == Json(4), fused["parameters"].dump().c_str());
    QCOMPARE(fused["reference"]["steps"].size(), size_t(2));
}

void TestCast::cliInspectAndCheck()
{
    Run check = kforge({"cast", "check", qs(m_package.string())});
    QVERIFY2(check.exitCode == 0, qPrintable(check.err));
    QVERIFY(check.out.contains("ok"));
    Run inspect = kforge({"cast", "inspect", qs(m_package.string())});
    QVERIFY2(inspect.exitCode == 0, qPrintable(inspect.err));
    for (const char* text : {"cast::vector_add", "cast::fused_add_rms_norm_fp16", "sm_80, sm_86, sm_89, sm_90", "PTX compute_80",
                             "ops/vector_add/bin/sm_90.cubin", "1.32×"})
        QVERIFY2(inspect.out.contains(QString::fromUtf8(text)), text);
    Run json = kforge({"cast", "inspect", "--json", qs(m_package.string())});
    QCOMPARE(json.exitCode, 0);
    const Json j = Json::parse(json.out.toStdString());
    QCOMPARE(j["ops"].size(), size_t(2));
    QVERIFY(j["manifest"]["schema_version"] == Json(1));

    // Export through the CLI: two architectures, no PTX, a chosen op name.
    const fs::path out = fs::path(m_tmp.path().toStdString()) / "two.cast";
    Run ex = kforge({"cast", "export", qs(m_ids[0]), "-o", qs(out.string()), "--registry", qs(m_registry.string()),
                     "--arch", "sm_90,sm_80", "--ptx", "none", "--name", qs(m_ids[0] + "=my_add")});
    QVERIFY2(ex.exitCode == 0, qPrintable(ex.err));
    QVERIFY(ex.out.contains("cast::my_add"));
    auto pkg = cast::openPackage(out);
    KF_VERIFY_OK(pkg);
    QVERIFY(pkg->manifest["architectures"] == Json({"sm_80", "sm_90"}));
    QVERIFY(pkg->manifest["ptx"].is_null());
    QCOMPARE(pkg->ops[0].images, (std::vector<std::string>{"sm_80", "sm_90"}));

    Run missing = kforge({"cast", "check", m_tmp.path() + "/nope.cast"});
    QCOMPARE(missing.exitCode, 2);

    // `cast run` needs its LibTorch half; without it kforge says so and exits 3.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("KF_CAST_TOOL", m_tmp.path() + "/no-such-kforge-cast");
    p.setProcessEnvironment(env);
    p.start(KF_KFORGE_BIN, {"cast", "run", qs(m_package.string())});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 3);
    QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("KF_CAST_TOOL"));
}

void TestCast::cliRunOnCpu_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("text");
    QTest::newRow("cpu") << QStringList{"--device", "cpu"} << 0 << "every output within the task's tolerance";
    QTest::newRow("no kernels, one op, json") << QStringList{"--device", "cpu", "--no-kernels", "--op", "vector_add", "--json"} << 0
                                              << "\"kernels\": false";
    QTest::newRow("unknown op") << QStringList{"--device", "cpu", "--op", "nothing"} << 2 << "no op nothing";
}

void TestCast::cliRunOnCpu()
{
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QString, text);
    if (!fs::exists(fs::path(KF_KFORGE_BIN).parent_path() / "kforge-cast"))
        QSKIP("kforge-cast (LibTorch) is not built");
    Run r = kforge(QStringList{"cast", "run", qs(m_package.string()), "--runs", "2"} + extra);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2((r.out + r.err).contains(text), qPrintable(r.out + r.err));
    if (exitCode == 0 && !extra.contains("--json"))
        for (const char* shape : {"N=1", "N=1000003", "B=1031 D=64"})   // every test shape of both tasks
            QVERIFY2(r.out.contains(shape), shape);
}

void TestCast::exportRefusals_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown ID") << QStringList{"cuda_nothing_h100_fp32_n1_v1"} << 2 << "cuda_nothing_h100_fp32_n1_v1";
    QTest::newRow("unknown arch") << QStringList{"@0", "--arch", "sm_42"} << 2 << "sm_42";
    QTest::newRow("arch twice") << QStringList{"@0", "--arch", "sm_90,sm_90"} << 2 << "twice";
    QTest::newRow("PTX of an unlisted arch") << QStringList{"@0", "--arch", "sm_90", "--ptx", "compute_80"} << 2
                                             << "needs sm_80";
    QTest::newRow("one name twice") << QStringList{"@0", "@0"} << 2 << "--name";
    QTest::newRow("bad op name") << QStringList{"@0", "--name", "@0=2fast"} << 2 << "cannot name an operator";
    QTest::newRow("architecture-specific target") << QStringList{"@0", "--arch", "sm_90a"} << 2 << "architecture-specific";
    QTest::newRow("keyword op name") << QStringList{"@0", "--name", "@0=lambda"} << 2 << "cannot name an operator";
}

void TestCast::exportRefusals()
{
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QStringList args{"cast", "export", "-o", qs(m_tmp.path().toStdString() + "/refused.cast"), "--registry",
                     qs(m_registry.string())};
    for (QString a : extra)
        args << a.replace("@0", qs(m_ids[0]));
    Run r = kforge(args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY2(!fs::exists(m_tmp.path().toStdString() + "/refused.cast"), "nothing is written on a refusal");
}

using Edit = std::function<void(std::vector<cast::ArchiveEntry>&)>;

void TestCast::tamperedPackagesAreRejected_data()
{
    QTest::addColumn<Edit>("edit");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("where");
    auto entry = [](std::vector<cast::ArchiveEntry>& es, const std::string& suffix) -> cast::ArchiveEntry& {
        for (auto& e : es)
            if (e.name.size() >= suffix.size() && e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) == 0)
                return e;
        return es.front();
    };
    QTest::newRow("cubin changed") << Edit([=](auto& es) { entry(es, "vector_add/bin/sm_90.cubin").bytes[100] ^= 1; })
                                   << "does not match its SHA-256" << "/sha256";
    QTest::newRow("evidence changed, hash fixed up but size not")
        << Edit([=](auto& es) { entry(es, "vector_add/registry/performance.json").bytes += " "; })
        << "bytes, the manifest says" << "/bytes";
    QTest::newRow("file not listed") << Edit([](auto& es) { es.push_back({"ops/vector_add/extra.so", "\x7f" "ELF"}); })
                                     << "does not list" << "/files";
    QTest::newRow("listed file missing") << Edit([=](auto& es) {
        auto& victim = entry(es, "vector_add/bin/sm_86.cubin");
        es.erase(es.begin() + (&victim - es.data()));
    }) << "not in the archive" << "/path";
    QTest::newRow("manifest not first") << Edit([](auto& es) { std::swap(es[0], es[1]); }) << "first entry" << "";
    QTest::newRow("newer schema") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["schema_version"] = 3;
        setManifest(es, m);
    }) << "update KernelForge" << "/schema_version";
    QTest::newRow("not a package") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["format"] = "something-else";
        setManifest(es, m);
    }) << "not a KernelForge package" << "/format";
    QTest::newRow("launch tree edited") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["launches"][0]["grid"][0]["tree"] = Json::parse(R"({"int": 1})");
        setManifest(es, m);
    }) << "is not the parse of its text" << "/ops/0/launches/0/grid/0/tree";
    QTest::newRow("schema edited") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["schema"] = "vector_add(Tensor a) -> Tensor";
        setManifest(es, m);
    }) << "the inputs and outputs make" << "/ops/0/schema";
    QTest::newRow("dtype differs from task.json") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["inputs"][0]["dtype"] = "fp16";
        setManifest(es, m);
    }) << "differs from \"a\" in its task.json" << "/ops/0/inputs/0";
    QTest::newRow("image outside the package") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["images"]["sm_90"] = "/usr/lib/evil.cubin";
        setManifest(es, m);
    }) << "not a file of the package" << "/ops/0/images/sm_90";
    QTest::newRow("launch arg names another buffer") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["launches"][0]["args"][0] = {{"tensor", "elsewhere"}};
        setManifest(es, m);
    }) << "not an input, output or scratch" << "/ops/0/launches/0/args/0/tensor";
    QTest::newRow("unknown symbol in a plan") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["launches"][0]["grid"][0] = {{"text", "Q"}, {"tree", {{"sym", "Q"}}}};
        setManifest(es, m);
    }) << "neither a symbol nor a parameter" << "/ops/0/launches/0/grid/0/tree/sym";
    QTest::newRow("unknown key") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["preload"] = "os.system";
        setManifest(es, m);
    }) << "preload" << "/ops/0/preload";
    QTest::newRow("symbol named like a parameter") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["parameters"]["N"] = 3;
        setManifest(es, m);
    }) << "names a parameter and also a symbol" << "/ops/0/parameters/N";
    QTest::newRow("reference reads no input") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["reference"] = {{"kind", "torchscript"}, {"file", m["ops"][0]["task"]}, {"inputs", {"a", "zz"}}};
        setManifest(es, m);
    }) << "\"zz\" is not an input of the op" << "/ops/0/reference/inputs";
    QTest::newRow("reference op outside the catalog") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["reference"]["steps"][0]["op"] = "system";
        setManifest(es, m);
    }) << "not an op of the reference catalog" << "/ops/0/reference/steps/0/op";
    QTest::newRow("evidence summary of the wrong type") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["ops"][0]["evidence"]["gpu"] = 1;
        setManifest(es, m);
    }) << "must be a string" << "/ops/0/evidence/gpu";
    QTest::newRow("nested 100000 levels") << Edit([](auto& es) {
        std::string& text = es.front().bytes;
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        text.insert(text.find("\"gates\": ") + 9, deep + ", \"x\": ");
    }) << "nested more than 256 levels" << "";
    QTest::newRow("task.json forged, hash fixed up") << Edit([=](auto& es) {
        auto& t = entry(es, "vector_add/registry/task.json");
        Json task = Json::parse(t.bytes);
        task["inputs"][0]["dtype"] = "fp16";
        t.bytes = task.dump(2);
        rehash(es, t.name);
    }) << "differs from \"a\" in its task.json" << "/ops/0/inputs/0";
}

void TestCast::tamperedPackagesAreRejected()
{
    QFETCH(Edit, edit);
    QFETCH(QString, message);
    QFETCH(QString, where);
    std::vector<cast::ArchiveEntry> entries = m_good;
    edit(entries);
    const fs::path file = fs::path(m_tmp.path().toStdString()) / "tampered.cast";
    KF_VERIFY_OK(cast::writeArchive(file, entries));
    auto pkg = cast::openPackage(file);
    QVERIFY2(!pkg, "a tampered package must be refused");
    const std::string text = pkg.error().message();
    QVERIFY2(qs(text).contains(message), text.c_str());
    QVERIFY2(qs(pkg.error().pointer).endsWith(where), pkg.error().pointer.c_str());
    Run check = kforge({"cast", "check", qs(file.string())});
    QCOMPARE(check.exitCode, 1);
    QVERIFY2(check.err.contains(message), qPrintable(check.err));
}

void TestCast::hostileArchivesAreRejected_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<uint>("mode");
    QTest::addColumn<QString>("message");
    QTest::newRow("parent folder") << "ops/../../etc/passwd" << 0u << "climbs out of the package";
    QTest::newRow("absolute path") << "/etc/passwd" << 0u << "absolute path";
    QTest::newRow("backslash") << "ops\\..\\x" << 0u << "backslash";
    QTest::newRow("drive letter") << "C:evil" << 0u << "drive letter";
    QTest::newRow("dot component") << "ops/./x" << 0u << "\".\" component";
    QTest::newRow("empty component") << "ops//x" << 0u << "empty path component";
    QTest::newRow("control character") << "ops/x\ny" << 0u << "control character";
    QTest::newRow("directory entry") << "ops/dir/" << 0u << "directory entry";
    QTest::newRow("symbolic link") << "ops/link" << unsigned(S_IFLNK | 0777) << "symbolic link";
    QTest::newRow("device file") << "ops/dev" << unsigned(S_IFCHR | 0644) << "not a regular file";
    QTest::newRow("same name in other case") << "MANIFEST.JSON" << 0u << "only in case";
}

void TestCast::hostileArchivesAreRejected()
{
    QFETCH(QString, name);
    QFETCH(uint, mode);
    QFETCH(QString, message);
    const fs::path file = fs::path(m_tmp.path().toStdString()) / "hostile.cast";
    writeRawZip(file, {{"manifest.json", m_good.front().bytes, 0}, {name.toStdString(), "payload", mode}});
    auto pkg = cast::openPackage(file);
    QVERIFY(!pkg);
    QVERIFY2(qs(pkg.error().why).contains(message), pkg.error().message().c_str());
    QCOMPARE(qs(pkg.error().pointer), name);   // the entry is named
    Run check = kforge({"cast", "check", qs(file.string())});
    QCOMPARE(check.exitCode, 1);
}

void TestCast::limitsBoundEntriesAndSizes()
{
    const fs::path file = fs::path(m_tmp.path().toStdString()) / "bomb.cast";
    // 64 MiB of zeros deflate to about 64 KiB: a ratio near 1000.
    writeRawZip(file, {{"manifest.json", m_good.front().bytes, 0}, {"ops/zeros.bin", std::string(64u << 20, '\0'), 0}});
    auto pkg = cast::openPackage(file);
    QVERIFY(!pkg);
    QVERIFY2(qs(pkg.error().why).contains("zip bomb"), pkg.error().message().c_str());
    QCOMPARE(qs(pkg.error().pointer), QString("ops/zeros.bin"));

    cast::ArchiveLimits small;
    small.maxEntries = 3;
    auto many = cast::readArchive(m_package, small);
    QVERIFY(!many);
    QVERIFY2(qs(many.error().why).contains("at most 3"), many.error().message().c_str());
    small = {};
    small.maxTotalBytes = 1000;
    auto total = cast::readArchive(m_package, small);
    QVERIFY(!total);
    QVERIFY2(qs(total.error().why).contains("at most 1000"), total.error().message().c_str());
    small = {};
    small.maxEntryBytes = 100;
    auto big = cast::readArchive(m_package, small);
    QVERIFY(!big);
    QCOMPARE(qs(big.error().pointer), QString("manifest.json"));

    // Two entries with one name (a zip writer allows it; the second would shadow the first).
    const fs::path dup = fs::path(m_tmp.path().toStdString()) / "dup.cast";
    writeRawZip(dup, {{"manifest.json", m_good.front().bytes, 0}, {"ops/aaaa", "1", 0}, {"ops/aaab", "2", 0}});
    auto bytes = readFileBytes(dup);
    KF_VERIFY_OK(bytes);
    std::string raw = bytes.value();
    for (std::size_t at = raw.find("ops/aaab"); at != std::string::npos; at = raw.find("ops/aaab", at))
        raw[at + 7] = 'a';
    auto dupPkg = cast::openPackageBytes(raw, "dup.cast");
    QVERIFY(!dupPkg);
    QVERIFY2(qs(dupPkg.error().why).contains("appears twice"), dupPkg.error().message().c_str());
    QCOMPARE(qs(dupPkg.error().pointer), QString("ops/aaaa"));

    auto garbage = cast::openPackageBytes(std::string(1000, 'x'), "garbage.cast");
    QVERIFY(!garbage);
    QVERIFY2(qs(garbage.error().why).contains("not a readable zip"), garbage.error().message().c_str());
}

void TestCast::expressionTreesMatchTheSharedVectors()
{
    // The same file is evaluated by the Python runtime's evaluator (tests/cast/test_cast_runtime.py).
    auto text = readFileBytes(fs::path(KF_SOURCE_DIR) / "tests" / "cast" / "expr-vectors.json");
    KF_VERIFY_OK(text);
    const Json vectors = Json::parse(text.value());
    QVERIFY(vectors.size() >= 20);
    for (const Json& v : vectors) {
        const std::string expr = v["text"];
        auto e = Expr::parse(expr);
        KF_VERIFY_OK(e);
        QVERIFY2(e->tree() == v["tree"], (expr + ": " + e->tree().dump()).c_str());
        Env env;
        for (const auto& [k, x] : v["env"].items())
            env[k] = x.is_number_integer() ? Value::integer(x.get<std::int64_t>()) : Value::real(x.get<double>());
        auto r = e->eval(env);
        if (v.contains("error")) {
            QVERIFY2(!r, expr.c_str());
            continue;
        }
        KF_VERIFY_OK(r);
        if (v["value"].is_number_integer()) {
            QVERIFY2(r->isInt, expr.c_str());
            QCOMPARE(r->i, v["value"].get<std::int64_t>());
        } else {
            QVERIFY2(!r->isInt, expr.c_str());
            QCOMPARE(r->d, v["value"].get<double>());
        }
    }
}

void TestCast::opNames_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("op");
    QTest::newRow("plain") << "softmax_fp32" << "softmax_fp32";
    QTest::newRow("dashes and dots") << "rms-norm.v2" << "rms_norm_v2";
    QTest::newRow("leading digit") << "2d_conv" << "op_2d_conv";
    QTest::newRow("keyword") << "lambda" << "op_lambda";
}

void TestCast::opNames()
{
    QFETCH(QString, task);
    QFETCH(QString, op);
    QCOMPARE(qs(cast::defaultOpName(task.toStdString())), op);
    QVERIFY(cast::isOpName(op.toStdString()));
}

void TestCast::modelPackageExport()
{
    if (!haveToyModels())
        QSKIP("the toy models need a Python with torch (CTest fixture cast_models)");
    auto pkg = cast::openPackage(m_modelPackage);
    KF_VERIFY_OK(pkg);
    QCOMPARE(pkg->schemaVersion, cast::kCastModelSchemaVersion);
    QCOMPARE(pkg->models.size(), size_t(3));
    const cast::PackageModel& toy16 = pkg->models[0];
    QCOMPARE(qs(toy16.name), QString("toy16"));
    QCOMPARE(qs(toy16.format), QString("torch.export"));
    QCOMPARE(qs(toy16.file), QString("models/toy16/model.pt2"));
    // Its graph calls add and rms_norm, so both packaged tapes could apply; call sites decide at run.
    QCOMPARE(toy16.uses, (std::vector<std::string>{"vector_add", "fused_add_rms_norm_fp16"}));
    const Json& e = toy16.json;
    QVERIFY(e["example"] == Json({{"kind", "shapes"}, {"file", "models/toy16/inputs.json"}}));
    QVERIFY2(e["inputs"] == Json::parse(R"([{"name": "ids", "dtype": "int64", "shape": [8]},
                                            {"name": "r", "dtype": "fp16", "shape": [8, 64]}])"), e["inputs"].dump().c_str());
    for (const char* op : {"torch.ops.aten.add.Tensor", "torch.ops.aten.rms_norm.default", "torch.ops.aten.linear.default",
                           "torch.ops.aten.gelu.default", "torch.ops.aten.softmax.int", "torch.ops.aten.embedding.default"}) {
        const auto& ops = e["graph_ops"];
        QVERIFY2(std::find(ops.begin(), ops.end(), Json(op)) != ops.end(), op);
    }
    QVERIFY(e["torch_version"].get<std::string>().rfind("2.", 0) == 0);
    QVERIFY(pkg->models[1].json["example"] == Json({{"kind", "program"}, {"file", nullptr}}));
    // TorchScript: what its code calls, read from the archive's code/ files.
    const cast::PackageModel& ts = pkg->models[2];
    QCOMPARE(qs(ts.format), QString("torchscript"));
    QCOMPARE(qs(ts.file), QString("models/toy16ts/model.ts"));
    for (const char* op : {"aten.add", "aten.rms_norm", "aten.softmax"}) {
        const auto& ops = ts.json["graph_ops"];
        QVERIFY2(std::find(ops.begin(), ops.end(), Json(op)) != ops.end(), ts.json["graph_ops"].dump().c_str());
    }
    QCOMPARE(ts.uses, (std::vector<std::string>{"vector_add", "fused_add_rms_norm_fp16"}));

    Run inspect = kforge({"cast", "inspect", qs(m_modelPackage.string())});
    QVERIFY2(inspect.exitCode == 0, qPrintable(inspect.err));
    for (const char* text : {"model toy16", "(torch.export, torch 2.", "may use cast::vector_add, cast::fused_add_rms_norm_fp16",
                             "no model-level evidence yet", "op-level evidence", "models/toy32/model.pt2"})
        QVERIFY2(inspect.out.contains(QString::fromUtf8(text)), text);
    Run check = kforge({"cast", "check", qs(m_modelPackage.string())});
    QVERIFY2(check.exitCode == 0 && check.out.contains("3 model(s)"), qPrintable(check.out + check.err));
    // A package without models stays schema 1, which readers of schema 1 load.
    QVERIFY(cast::openPackage(m_package)->schemaVersion == cast::kCastSchemaVersion);
}

void TestCast::modelPackagesRefused_data()
{
    QTest::addColumn<Edit>("edit");
    QTest::addColumn<QString>("message");
    const fs::path scratch = fs::path(m_tmp.path().toStdString()) / "inner.zip";
    const std::string model = "models/toy16/model.pt2";
    QTest::newRow("weights tampered") << Edit([=](auto& es) {
        for (auto& e : es)
            if (e.name == model)
                e.bytes[e.bytes.size() / 2] ^= 0x40;
    }) << "does not match its SHA-256";
    QTest::newRow("model uses a missing op") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["models"][0]["uses"].push_back("flash_attention");
        setManifest(es, m);
    }) << "the model uses cast::flash_attention, which this package does not hold";
    QTest::newRow("graph calls a missing cast op") << Edit([=](auto& es) {
        editNested(es, model, [](auto& inner) {
            auto& prog = innerEntry(inner, "models/model.json");
            const std::string from = "torch.ops.aten.softmax.int", to = "torch.ops.cast.flash_attention.default";
            for (auto at = prog.bytes.find(from); at != std::string::npos; at = prog.bytes.find(from))
                prog.bytes.replace(at, from.size(), to);
        }, scratch);
        Json m = manifestOf(es);
        auto& ops = m["models"][0]["graph_ops"];
        for (auto& op : ops)
            if (op == "torch.ops.aten.softmax.int")
                op = "torch.ops.cast.flash_attention.default";
        std::sort(ops.begin(), ops.end());
        setManifest(es, m);
    }) << "the model calls cast::flash_attention, which this package does not hold";
    QTest::newRow("pickled weight") << Edit([=](auto& es) {
        editNested(es, model, [](auto& inner) {
            auto& cfg = innerEntry(inner, "data/weights/model_weights_config.json");
            Json c = Json::parse(cfg.bytes);
            c["config"].begin().value()["use_pickle"] = true;
            cfg.bytes = c.dump();
        }, scratch);
    }) << "is stored as a pickle";
    QTest::newRow("native code inside") << Edit([=](auto& es) {
        editNested(es, model, [](auto& inner) {
            const std::string top = inner.front().name.substr(0, inner.front().name.find('/') + 1);
            inner.push_back({top + "data/aotinductor/model/model.so", "\x7f" "ELF"});
        }, scratch);
    }) << "AOTInductor or ExecuTorch artefacts are not accepted";
    QTest::newRow("legacy pickled weights") << Edit([=](auto& es) {
        // torch.export.load unpickles data/weights/model.pt (weights_only=False as a fallback) when present.
        editNested(es, model, [](auto& inner) {
            const std::string top = inner.front().name.substr(0, inner.front().name.find('/') + 1);
            inner.push_back({top + "data/weights/model.pt", "PK-not-really"});
        }, scratch);
    }) << "holds \"data/weights/model.pt\", which is not part of a torch.export program";
    QTest::newRow("config blessing the legacy pickle") << Edit([=](auto& es) {
        editNested(es, model, [](auto& inner) {
            auto& cfg = innerEntry(inner, "data/weights/model_weights_config.json");
            Json c = Json::parse(cfg.bytes);
            c["config"].begin().value()["path_name"] = "model.pt";
            cfg.bytes = c.dump();
            const std::string top = inner.front().name.substr(0, inner.front().name.find('/') + 1);
            inner.push_back({top + "data/weights/model.pt", "PK-not-really"});
        }, scratch);
    }) << "names the payload 'model.pt'";
    QTest::newRow("weights config missing") << Edit([=](auto& es) {
        editNested(es, model, [](auto& inner) {
            inner.erase(std::remove_if(inner.begin(), inner.end(), [](const auto& e) {
                            return e.name.find("model_weights_config.json") != std::string::npos;
                        }),
                        inner.end());
        }, scratch);
    }) << "falls back to loading a pickle";
    QTest::newRow("use_pickle not a boolean") << Edit([=](auto& es) {
        editNested(es, model, [](auto& inner) {
            auto& cfg = innerEntry(inner, "data/weights/model_weights_config.json");
            Json c = Json::parse(cfg.bytes);
            c["config"].begin().value()["use_pickle"] = 1;
            cfg.bytes = c.dump();
        }, scratch);
    }) << "use_pickle is not true or false";
    QTest::newRow("program of the wrong shape") << Edit([=](auto& es) {
        editNested(es, model, [](auto& inner) {
            auto& prog = innerEntry(inner, "models/model.json");
            Json p = Json::parse(prog.bytes);
            p["graph_module"]["signature"]["input_specs"][0]["user_input"] = 5;   // a type-confused program
            p["graph_module"]["graph"]["tensor_values"] = "x";
            prog.bytes = p.dump();
        }, scratch);
        Json m = manifestOf(es);
        m["models"][0]["inputs"][0] = {{"name", "(not a tensor)"}, {"dtype", "scalar"}, {"shape", Json::array()}};
        setManifest(es, m);
    }) << "is not the inputs the model file was exported with";
    QTest::newRow("graph_ops edited") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["models"][0]["graph_ops"].erase(0);
        setManifest(es, m);
    }) << "is not the list of operators the model file calls";
    QTest::newRow("inputs edited") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["models"][0]["inputs"][1]["dtype"] = "fp32";
        setManifest(es, m);
    }) << "is not the inputs the model file was exported with";
    QTest::newRow("input description broken") << Edit([](auto& es) {
        for (auto& e : es)
            if (e.name == "models/toy16/inputs.json")
                e.bytes = R"({"inputs": [{"name": "ids", "dtype": "int64", "shape": [8], "distribution": "randint"}]})";
        rehash(es, "models/toy16/inputs.json");
    }) << "needs \"high\"";
    QTest::newRow("models in schema 1") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["schema_version"] = 1;
        setManifest(es, m);
    }) << "unknown key";
    QTest::newRow("schema 2 without models") << Edit([](auto& es) {
        Json m = manifestOf(es);
        m["models"] = Json::array();
        setManifest(es, m);
    }) << "holds at least one model";
}

void TestCast::modelPackagesRefused()
{
    if (!haveToyModels())
        QSKIP("the toy models need a Python with torch (CTest fixture cast_models)");
    QFETCH(Edit, edit);
    QFETCH(QString, message);
    std::vector<cast::ArchiveEntry> entries = m_modelGood;
    edit(entries);
    const fs::path file = fs::path(m_tmp.path().toStdString()) / "tampered-model.cast";
    KF_VERIFY_OK(cast::writeArchive(file, entries));
    auto pkg = cast::openPackage(file);
    QVERIFY2(!pkg, "a tampered model package must be refused");
    QVERIFY2(qs(pkg.error().message()).contains(message), pkg.error().message().c_str());
    Run check = kforge({"cast", "check", qs(file.string())});
    QCOMPARE(check.exitCode, 1);
    QVERIFY2(check.err.contains(message), qPrintable(check.err));
}

void TestCast::modelExportRefusals_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("message");
    QTest::newRow("not a torch archive") << QStringList{"--model", "@notzip"} << "not a readable zip archive";
    QTest::newRow("inputs need high") << QStringList{"--model", "@m/toy_fp16.pt2", "--inputs", "@bad.json"} << "needs \"high\"";
    QTest::newRow("more inputs than models") << QStringList{"--model", "@m/toy_fp16.pt2", "--inputs", "@m/toy_fp16_inputs.json",
                                                            "--inputs", "@m/toy_fp16_inputs.json"} << "more --inputs";
    QTest::newRow("two models, one name") << QStringList{"--model", "a=@m/toy_fp16.pt2", "--model", "a=@m/toy_fp32.pt2"}
                                          << "two models are named a";
    QTest::newRow("bad model name") << QStringList{"--model", "class=@m/toy_fp16.pt2"} << "cannot name a model";
}

void TestCast::modelExportRefusals()
{
    if (!haveToyModels())
        QSKIP("the toy models need a Python with torch (CTest fixture cast_models)");
    QFETCH(QStringList, extra);
    QFETCH(QString, message);
    const std::string tmp = m_tmp.path().toStdString();
    {
        std::ofstream bad(tmp + "/bad.json");
        bad << R"({"inputs": [{"name": "ids", "dtype": "int64", "shape": [8], "distribution": "randint"}]})";
    }
    QStringList args{"cast", "export", qs(m_ids[1]), "-o", qs(tmp + "/refused-model.cast"), "--registry", qs(m_registry.string())};
    for (QString a : extra)
        args << a.replace("@m/", qs(m_models.string() + "/")).replace("@notzip", qs(tmp + "/notzip.pt2"))
                    .replace("@bad.json", qs(tmp + "/bad.json"));
    std::ofstream(tmp + "/notzip.pt2") << "not a zip";
    Run r = kforge(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(!fs::exists(tmp + "/refused-model.cast"));
}

void TestCast::modelRunsAreRecorded()
{
    if (!haveToyModels())
        QSKIP("the toy models need a Python with torch (CTest fixture cast_models)");
    const fs::path file = fs::path(m_tmp.path().toStdString()) / "recorded.cast";
    fs::copy_file(m_modelPackage, file, fs::copy_options::overwrite_existing);
    Json run = Json::parse(R"json({
      "scope": "model-level, end to end", "model": "toy16", "package": {"name": "model", "version": "1.0.0"},
      "created_at": "2026-11-27T03:00:00Z", "device": "cuda:0", "gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130",
      "cuda_driver": "13.0", "runtime": "kernelforge_cast (Python 3.11.7)",
      "inputs": [{"name": "ids", "dtype": "int64", "shape": [8]}], "runs": 20, "warmup": 5,
      "with_kernels_ms": {"median": 0.5, "min": 0.4, "max": 0.7, "p10": 0.45, "p90": 0.6},
      "without_kernels_ms": {"median": 0.6, "min": 0.5, "max": 0.8, "p10": 0.55, "p90": 0.7},
      "speedup": 1.2,
      "substitution": [{"node": "add", "op": "add", "status": "substituted", "cast_op": "fused_add_rms_norm_fp16", "reason": ""}],
      "fallbacks": {}, "check": null})json");
    auto stored = cast::recordModelRun(file, "toy16", run);
    KF_VERIFY_OK(stored);
    QVERIFY(stored->rfind("models/toy16/runs/", 0) == 0);
    auto pkg = cast::openPackage(file);
    KF_VERIFY_OK(pkg);
    QCOMPARE(pkg->models[0].runs, std::vector<std::string>{stored.value()});
    Run inspect = kforge({"cast", "inspect", qs(file.string())});
    QVERIFY2(inspect.exitCode == 0, qPrintable(inspect.err));
    for (const char* text : {"model run (model-level, end to end)", "NVIDIA H100 80GB HBM3", "1.20×", "1 of 1"})
        QVERIFY2(inspect.out.contains(QString::fromUtf8(text)), text);

    // Evidence that claims another scope, or another model, is not stored.
    Json opLevel = run;
    opLevel["scope"] = "op-level, microbenchmark";
    auto refused = cast::recordModelRun(file, "toy16", opLevel);
    QVERIFY(!refused && qs(refused.error().why).contains("model-level, end to end"));
    QVERIFY(!cast::recordModelRun(file, "toy32", run));
    QVERIFY(!cast::recordModelRun(file, "nope", run));
    Json foreign = run;
    foreign["package"]["name"] = "other";
    auto refusedForeign = cast::recordModelRun(file, "toy16", foreign);
    QVERIFY(!refusedForeign && qs(refusedForeign.error().why).contains("the run is of package other 1.0.0"));
    Json forgedSpeedup = run;
    forgedSpeedup["speedup"] = 3.0;   // not what the medians say
    auto refusedSpeedup = cast::recordModelRun(file, "toy16", forgedSpeedup);
    QVERIFY(!refusedSpeedup && qs(refusedSpeedup.error().why).contains("ratio of the two medians"));
    QCOMPARE(cast::openPackage(file)->models[0].runs.size(), size_t(1));

    // Beside the registry version whose kernel ran (fused_add_rms_norm_fp16 is m_ids[1]); not
    // beside vector_add, which did not run.
    const Registry reg(m_registry);
    auto copies = cast::recordModelRunInRegistry(reg, pkg.value(), run);
    KF_VERIFY_OK(copies);
    QCOMPARE(copies->size(), size_t(1));
    QCOMPARE(qs(copies->front().id), qs(m_ids[1]));
    QVERIFY(fs::exists(copies->front().file));
    auto inRegistry = cast::modelRunsOf(reg, m_ids[1]);
    QCOMPARE(inRegistry.size(), size_t(1));
    QVERIFY2(inRegistry[0].problem.empty(), inRegistry[0].problem.c_str());
    QVERIFY(inRegistry[0].run == run);
    QVERIFY(cast::modelRunsOf(reg, m_ids[0]).empty());
    // A run in which the kernel fell back is no evidence for it: no copy, and the reason said.
    Json fellBack = run;
    fellBack["fallbacks"] = {{"fused_add_rms_norm_fp16", 4}};
    auto noCopy = cast::recordModelRunInRegistry(reg, pkg.value(), fellBack);
    KF_VERIFY_OK(noCopy);
    QVERIFY(noCopy->front().file.empty() && qs(noCopy->front().why).contains("fell back 4 time(s)"));
    QCOMPARE(cast::modelRunsOf(reg, m_ids[1]).size(), size_t(1));
    // A file edited into something else is reported, not shown; the registry check ignores the folder.
    std::ofstream(cast::modelRunsDirectory(reg, m_ids[1]) / "zz-forged.json") << R"({"scope": "op-level"})";
    inRegistry = cast::modelRunsOf(reg, m_ids[1]);
    QCOMPARE(inRegistry.size(), size_t(2));
    QVERIFY2(qs(inRegistry[1].problem).contains("model-level, end to end"), inRegistry[1].problem.c_str());
    auto drift = reg.check(false);
    KF_VERIFY_OK(drift);
    for (const auto& d : drift.value())
        QVERIFY2(d.file.find("model-runs") == std::string::npos, d.problem.c_str());
}

void TestCast::modelRunHeadline_data()
{
    QTest::addColumn<QString>("edit");       // fields set on a valid run ("<absent>": removed)
    QTest::addColumn<QString>("headline");   // "model|created_at|gpu|speedup", or the Error's words
    QTest::newRow("on a GPU, with kernels") << "{}" << "toy16|2026-11-27T03:00:00Z|NVIDIA H100 80GB HBM3|1.2";
    QTest::newRow("on the CPU, without kernels")
        << R"({"gpu": "", "device": "cpu", "with_kernels_ms": "<absent>", "speedup": null})" << "toy16|2026-11-27T03:00:00Z||none";
    QTest::newRow("another scope") << R"({"scope": "op-level, microbenchmark"})" << "at /scope: a model run's scope";
    QTest::newRow("a speedup that is text") << R"({"speedup": "fast"})" << "at /speedup: is not the ratio";
    QTest::newRow("no model") << R"({"model": null})" << "at /model:";
}

// The headline the model-run dialog lists: read from checked evidence, or an Error with the place.
void TestCast::modelRunHeadline()
{
    QFETCH(QString, edit);
    QFETCH(QString, headline);
    Json run = Json::parse(R"json({
      "scope": "model-level, end to end", "model": "toy16", "package": {"name": "model", "version": "1.0.0"},
      "created_at": "2026-11-27T03:00:00Z", "device": "cuda:0", "gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130",
      "cuda_driver": "13.0", "runtime": "kernelforge_cast (Python 3.11.7)",
      "inputs": [{"name": "ids", "dtype": "int64", "shape": [8]}], "runs": 20, "warmup": 5,
      "with_kernels_ms": {"median": 0.5, "min": 0.4, "max": 0.7, "p10": 0.45, "p90": 0.6},
      "without_kernels_ms": {"median": 0.6, "min": 0.5, "max": 0.8, "p10": 0.55, "p90": 0.7},
      "speedup": 1.2,
      "substitution": [{"node": "add", "op": "add", "status": "substituted", "cast_op": "fused_add_rms_norm_fp16", "reason": ""}],
      "fallbacks": {}, "check": null})json");
    const Json fields = Json::parse(edit.toStdString());
    for (const auto& [key, value] : fields.items()) {
        if (value == "<absent>")
            run.erase(key);
        else
            run[key] = value;
    }
    auto h = cast::readModelRunHeadline(run, "run.json");
    if (!headline.contains('|')) {
        QVERIFY(!h);
        const QString message = qs(h.error().message());
        QVERIFY2(message.startsWith("run.json: " + headline), qPrintable(message));
        return;
    }
    KF_VERIFY_OK(h);
    const QString got = QStringLiteral("%1|%2|%3|%4").arg(qs(h->model), qs(h->createdAt), qs(h->gpu),
                                                         h->speedup ? QString::number(*h->speedup) : QStringLiteral("none"));
    QCOMPARE(got, headline);
}

QTEST_GUILESS_MAIN(TestCast)
#include "tst_cast.moc"
