// .cast packages: export from a registry for four architectures, inspect and check through the
// CLI, and every kind of malformed or forged archive refused with the entry named. The package
// exported here is also the fixture of tests/cast/test_cast_runtime.py (the Python runtime).
#include "registryfixture.h"
#include "testutil.h"

#include "engine/cast/CastArchive.h"
#include "engine/cast/CastExport.h"
#include "engine/cast/CastPackage.h"
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

private:
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
        auto out = reg.promote(test::passingInput(task, "optimized.cu", {1.25, 1.4}));
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
        QVERIFY2(ev["registry_signature"].get<std::string>().rfind("signed", 0) == 0,
                 ev["registry_signature"].dump().c_str());
    }
    // Parameters and launch-plan expressions as trees a runtime can evaluate without a parser.
    const Json& fused = pkg->ops[1].json;
    QVERIFY(fused["parameters"]["eps"] == Json(1e-6));
    QVERIFY(fused["launches"][0]["grid"][0]["text"] == Json("ceil_div(B, 4)"));
    QVERIFY(fused["launches"][0]["grid"][0]["tree"] ==
            Json::parse(R"({"call": "ceil_div", "args": [{"sym": "B"}, {"int": 4}]})"));
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
        m["schema_version"] = 2;
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

QTEST_GUILESS_MAIN(TestCast)
#include "tst_cast.moc"
