// The registry of verified kernels: deterministic IDs and versions, what a version folder holds,
// refusals that write nothing, `check` catching every kind of drift, orphans, remove, deprecate,
// the per-registry threshold, and where the registry lives.
#include "registryfixture.h"
#include "testutil.h"

#include "engine/core/JsonReader.h"
#include "engine/registry/KernelId.h"
#include "engine/registry/Registry.h"

#include <QTemporaryDir>

#include <cstdlib>
#include <fstream>

using namespace kf;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

void writeText(const fs::path& file, const std::string& text)
{
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

std::string readText(const fs::path& file)
{
    auto b = readFileBytes(file);
    return b ? b.value() : std::string();
}

} // namespace

class TestRegistry : public QObject {
    Q_OBJECT

private slots:
    void init();
    void gpuSlugs_data();
    void gpuSlugs();
    void idPrefixesOfTheExamples_data();
    void idPrefixesOfTheExamples();
    void splitAndValidateIds_data();
    void splitAndValidateIds();
    void promoteWritesTheVersionFolderAndIndex();
    void versionsIncrementPerPrefix();
    void refusalWritesNothing();
    void checkIsCleanAfterPromote();
    void checkCatchesDrift_data();
    void checkCatchesDrift();
    void orphanFolderIsAWarningAndPruneRemovesIt();
    void removeDeletesEntryAndFolder();
    void deprecateKeepsTheEntryWithItsReason();
    void thresholdIsPerRegistry();
    void sanitizerPolicyIsPerRegistryAndRecorded();
    void malformedIndexIsRefusedWithPointer_data();
    void malformedIndexIsRefusedWithPointer();
    void resolveDirectoryOrder();
    void entryTaskIsTheTaskReducedToTheKernel();
    void includeFoldersTravelWithTheKernel();
    void includeFoldersMustBeSubfolders_data();
    void includeFoldersMustBeSubfolders();
    void pruneTouchesOnlyWhatTheRegistryMade();
    void lostIndexIsRefusedNeverPrunedAndRebuilt();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    fs::path m_taskDir;
    fs::path m_regDir;
};

void TestRegistry::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_taskDir = test::copyExample("softmax_fp32", m_tmp->path().toStdString());
    m_regDir = fs::path(m_tmp->path().toStdString()) / "registry";
}

void TestRegistry::gpuSlugs_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("slug");
    QTest::newRow("H100 SXM") << "NVIDIA H100 80GB HBM3" << "h100";
    QTest::newRow("H100 PCIe") << "NVIDIA H100 PCIe" << "h100";
    QTest::newRow("H200") << "NVIDIA H200" << "h200";
    QTest::newRow("A100 dashes") << "NVIDIA A100-SXM4-80GB" << "a100";
    QTest::newRow("GeForce") << "NVIDIA GeForce RTX 4090" << "rtx4090";
    QTest::newRow("RTX workstation") << "NVIDIA RTX A6000" << "rtxa6000";
    QTest::newRow("Tesla") << "Tesla T4" << "t4";
    QTest::newRow("L40S") << "NVIDIA L40S" << "l40s";
    QTest::newRow("empty") << "" << "gpu";
}

void TestRegistry::gpuSlugs()
{
    QFETCH(QString, name);
    QFETCH(QString, slug);
    QCOMPARE(qs(gpuSlug(name.toStdString())), slug);
}

void TestRegistry::idPrefixesOfTheExamples_data()
{
    QTest::addColumn<QString>("example");
    QTest::addColumn<QString>("prefix");
    QTest::newRow("one op") << "softmax_fp32" << "cuda_softmax_h100_fp32_b8192-d4096";
    QTest::newRow("tape") << "fused_add_rms_norm_fp16" << "cuda_add_rms_norm_h100_fp16_";
    QTest::newRow("1-D") << "vector_add" << "cuda_add_h100_fp32_n";
}

void TestRegistry::idPrefixesOfTheExamples()
{
    QFETCH(QString, example);
    QFETCH(QString, prefix);
    auto t = loadTask(fs::path(KF_SOURCE_DIR) / "resources" / "examples" / example.toStdString());
    KF_VERIFY_OK(t);
    const std::string p = kernelIdPrefix(t.value(), test::kFixtureGpu);
    QVERIFY2(qs(p).startsWith(prefix), p.c_str());
    QCOMPARE(kernelIdPrefix(t.value(), test::kFixtureGpu), p); // a function of its inputs
    QVERIFY(isValidKernelId(kernelId(p, 1)));
}

void TestRegistry::splitAndValidateIds_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<int>("version");
    QTest::newRow("v1") << "cuda_softmax_h100_fp32_b8192-d4096_v1" << true << "cuda_softmax_h100_fp32_b8192-d4096" << 1;
    QTest::newRow("v12") << "cuda_add_h100_fp32_n1_v12" << true << "cuda_add_h100_fp32_n1" << 12;
    QTest::newRow("no version") << "cuda_add_h100_fp32_n1" << false << "" << 0;
    QTest::newRow("v0") << "cuda_add_v0" << false << "" << 0;
    QTest::newRow("path escape") << "../x_v1" << false << "../x" << 1;
    QTest::newRow("hidden") << ".staging_v1" << false << ".staging" << 1;
    QTest::newRow("upper case") << "CUDA_X_v1" << false << "CUDA_X" << 1;
}

void TestRegistry::splitAndValidateIds()
{
    QFETCH(QString, id);
    QFETCH(bool, valid);
    QFETCH(QString, prefix);
    QFETCH(int, version);
    QCOMPARE(isValidKernelId(id.toStdString()), valid);
    auto s = splitKernelId(id.toStdString());
    if (prefix.isEmpty()) {
        QVERIFY(!s);
        return;
    }
    QVERIFY(s);
    QCOMPARE(qs(s->first), prefix);
    QCOMPARE(s->second, version);
}

void TestRegistry::promoteWritesTheVersionFolderAndIndex()
{
    const Registry reg(m_regDir);
    auto out = reg.promote(test::passingInput(m_taskDir, "optimized.cu", {1.2, 1.5}));
    KF_VERIFY_OK(out);
    QVERIFY2(out->entry, out->gates.sentence().c_str());
    const RegistryEntry& e = *out->entry;
    QCOMPARE(qs(e.id), QString("cuda_softmax_h100_fp32_b8192-d4096_v1"));
    QCOMPARE(qs(e.op), QString("softmax"));
    QCOMPARE(qs(e.dtype), QString("fp32"));
    QCOMPARE(qs(e.arch), QString("sm_90"));
    QCOMPARE(e.benchmarkShapes.size(), size_t(2));
    QVERIFY(qAbs(e.geomeanSpeedup - std::sqrt(1.2 * 1.5)) < 1e-9);
    QCOMPARE(e.minSpeedup, 1.2);

    const fs::path dir = reg.entryDirectory(e.id);
    for (const char* f : {"optimized.cu", "task.json", "launch.json", "correctness.json", "performance.json", "promotion.json"})
        QVERIFY2(fs::is_regular_file(dir / f), f);
    QCOMPARE(readText(dir / "optimized.cu"), readText(m_taskDir / "optimized.cu"));
    QVERIFY(!fs::exists(m_regDir / ".staging") || fs::is_empty(m_regDir / ".staging"));

    auto p = reg.promotion(e.id);
    KF_VERIFY_OK(p);
    // The file as written (docs/registry.md), and the record read back from it.
    const Json& pj = p->json;
    QCOMPARE(p->candidate.sourceHash, e.sourceHash);
    QCOMPARE(p->heldOutShapes.size(), size_t(2));
    QCOMPARE(p->gates.size(), size_t(9));
    QCOMPARE(p->threshold.value_or(0), 1.1);
    // What compute-sanitizer ran, under which policy, and how the gate went.
    QVERIFY(p->sanitizer.has_value());
    QVERIFY(p->sanitizer->policy == SanitizerPolicy::IfAvailable);
    QCOMPARE(qs(p->sanitizer->outcome), QString("passed"));
    QCOMPARE(qs(p->sanitizer->toolVersion), QString("2025.3.1.0"));
    QCOMPARE(p->sanitizer->tools, (std::vector<std::string>{"memcheck", "racecheck", "initcheck", "synccheck"}));
    QVERIFY(!p->sanitizer->shapes.empty());
    auto back = PromotionRecord::fromJson(p->toJson(), "memory");
    KF_VERIFY_OK(back);
    Json unsignedPj = pj;
    unsignedPj.erase("signature"); // the registry signs the record it writes
    QVERIFY(back->toJson() == unsignedPj);
    auto key = protocol::loadSigningKey(false);
    KF_VERIFY_OK(key);
    QVERIFY(protocol::checkSignature(pj, &key.value()).valid());
    QCOMPARE(pj["candidate"]["source_hash"].get<std::string>(), e.sourceHash);
    QCOMPARE(pj["task"]["hash"].get<std::string>(), e.taskHash);
    QCOMPARE(pj["seeds"]["correctness"].size(), size_t(3));
    QCOMPARE(pj["held_out_shapes"].size(), size_t(2));
    QVERIFY(pj["tolerances"][0]["output"] == Json("y"));
    QVERIFY(pj["environment"]["torch"] == Json("2.11.0"));
    QCOMPARE(pj["gates"].size(), size_t(9));
    QVERIFY(pj["gates"][3]["gate"] == Json("sanitizer"));
    QVERIFY(pj["sanitizer"]["policy"] == Json("if_available"));
    QVERIFY(pj["sanitizer"]["outcome"] == Json("passed"));
    QVERIFY(pj["sanitizer"]["tool_version"] == Json("2025.3.1.0"));
    QVERIFY(pj["threshold"] == Json(1.1));
    QVERIFY(pj["promoted_by"] == Json("test@fixture"));
    QVERIFY(qs(pj["evidence_scope"].get<std::string>()).contains("op-level microbenchmark of softmax (fp32) on NVIDIA H100"));
    QVERIFY(qs(pj["evidence_scope"].get<std::string>()).endsWith("not an end-to-end model speedup"));
    QVERIFY(pj["candidate"]["compile_options"][0] == Json("--gpu-architecture=sm_90"));

    auto index = reg.load();
    KF_VERIFY_OK(index);
    QCOMPARE(index->kernels.size(), size_t(1));
    QCOMPARE(index->kernels[0].files.size(), size_t(6));
    // The index round-trips through its own parser.
    auto again = parseRegistryIndex(registryIndexToJson(index.value()), "memory");
    KF_VERIFY_OK(again);
    QVERIFY(registryIndexToJson(again.value()) == registryIndexToJson(index.value()));
}

void TestRegistry::versionsIncrementPerPrefix()
{
    const Registry reg(m_regDir);
    QStringList ids;
    for (const char* gpu : {"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"}) {
        auto out = reg.promote(test::passingInput(m_taskDir, "optimized.cu", {1.3}, gpu));
        KF_VERIFY_OK(out);
        QVERIFY2(out->entry, out->gates.sentence().c_str());
        ids << qs(out->entry->id);
    }
    QCOMPARE(ids, QStringList({"cuda_softmax_h100_fp32_b8192-d4096_v1", "cuda_softmax_h100_fp32_b8192-d4096_v2",
                               "cuda_softmax_a100_fp32_b8192-d4096_v1"}));
    // A folder left by a killed promote keeps its number: the next version skips it.
    fs::create_directories(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v3");
    auto out = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    KF_VERIFY_OK(out);
    QCOMPARE(qs(out->entry->id), QString("cuda_softmax_h100_fp32_b8192-d4096_v4"));
    // A removed ID is never given to other code: someone may have pinned it.
    KF_VERIFY_OK(reg.remove("cuda_softmax_h100_fp32_b8192-d4096_v4"));
    out = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    KF_VERIFY_OK(out);
    QCOMPARE(qs(out->entry->id), QString("cuda_softmax_h100_fp32_b8192-d4096_v5"));
    QCOMPARE(reg.load()->removed, std::vector<std::string>{"cuda_softmax_h100_fp32_b8192-d4096_v4"});
}

void TestRegistry::refusalWritesNothing()
{
    const Registry reg(m_regDir);
    KF_VERIFY_OK(reg.promote(test::passingInput(m_taskDir, "optimized.cu")));
    const std::string before = readText(reg.indexFile());
    PromotionInput slow = test::passingInput(m_taskDir, "optimized.cu", {0.9});
    auto out = reg.promote(slow);
    KF_VERIFY_OK(out);
    QVERIFY(!out->entry);
    QCOMPARE(qs(out->gates.firstFailure()->gate), QString("per_shape_speedup"));
    QCOMPARE(readText(reg.indexFile()), before);
    QVERIFY(!fs::exists(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v2"));
    // The gates are judged against the files as they are: an edit after the runs is refused.
    PromotionInput stale = test::passingInput(m_taskDir, "optimized.cu");
    writeText(m_taskDir / "optimized.cu", readText(m_taskDir / "optimized.cu") + "\n// edited\n");
    out = reg.promote(stale);
    KF_VERIFY_OK(out);
    QVERIFY(!out->entry);
    QCOMPARE(qs(out->gates.firstFailure()->gate), QString("evidence"));
    QCOMPARE(readText(reg.indexFile()), before);
}

void TestRegistry::checkIsCleanAfterPromote()
{
    const Registry reg(m_regDir);
    auto empty = reg.check();
    KF_VERIFY_OK(empty);
    QVERIFY(empty->empty()); // no registry yet: nothing drifted
    KF_VERIFY_OK(reg.promote(test::passingInput(m_taskDir, "optimized.cu")));
    KF_VERIFY_OK(reg.promote(test::passingInput(m_taskDir, "optimized.cu")));
    auto drift = reg.check();
    KF_VERIFY_OK(drift);
    QVERIFY2(drift->empty(), drift->empty() ? "" : drift->front().problem.c_str());
}

void TestRegistry::checkCatchesDrift_data()
{
    QTest::addColumn<QString>("tamper");
    QTest::addColumn<QString>("file");      // drift's file ends with this
    QTest::addColumn<QString>("problem");   // phrase in the drift's sentence
    QTest::newRow("kernel source edited") << "edit-source" << "/optimized.cu" << "changed since promotion";
    QTest::newRow("speedup inflated") << "edit-performance" << "/performance.json" << "changed since promotion";
    QTest::newRow("report deleted") << "delete-correctness" << "/correctness.json" << "missing";
    QTest::newRow("folder deleted") << "delete-folder" << "_v1" << "folder is missing";
    QTest::newRow("index hash rewritten to match an edit") << "rehash" << "/promotion.json" << "does not describe the index entry";
    // Every hash fixed up to match: promotion.json's signature still tells (issue 23).
    QTest::newRow("evidence forged consistently") << "forge" << "/promotion.json" << "changed after it was signed";
    QTest::newRow("record edited, hashes fixed up") << "forge-record" << "/promotion.json" << "changed after it was signed";
    QTest::newRow("index op changed") << "index-op" << "_v1" << "op, dtype, task or benchmark shapes differ";
    QTest::newRow("index status deleted") << "index-status" << "verified_kernels.json" << "status";
    QTest::newRow("index speedup inflated") << "index-speedup" << "/promotion.json" << "speedups differ";
    QTest::newRow("index is not JSON") << "garbage-index" << "verified_kernels.json" << "line";
}

void TestRegistry::checkCatchesDrift()
{
    QFETCH(QString, tamper);
    QFETCH(QString, file);
    QFETCH(QString, problem);
    const Registry reg(m_regDir);
    auto out = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    KF_VERIFY_OK(out);
    const std::string id = out->entry->id;
    const fs::path dir = reg.entryDirectory(id);
    const std::string t = tamper.toStdString();
    auto rewriteIndex = [&](auto edit) {
        Json index = Json::parse(readText(reg.indexFile()));
        edit(index["kernels"][0]);
        writeText(reg.indexFile(), index.dump(2));
    };
    if (t == "edit-source") {
        writeText(dir / "optimized.cu", readText(dir / "optimized.cu") + "// faster now\n");
    } else if (t == "edit-performance") {
        Json p = Json::parse(readText(dir / "performance.json"));
        p["shapes"][0]["speedup"] = 9.9;
        writeText(dir / "performance.json", p.dump(2));
    } else if (t == "delete-correctness") {
        fs::remove(dir / "correctness.json");
    } else if (t == "delete-folder") {
        fs::remove_all(dir);
    } else if (t == "rehash") {
        // Edit the kernel and fix its file hash in the index: promotion.json still names the old source.
        writeText(dir / "optimized.cu", readText(dir / "optimized.cu") + "// faster now\n");
        rewriteIndex([&](Json& e) {
            for (Json& f : e["files"])
                if (f["path"] == "optimized.cu")
                    f["hash"] = hashHex(readText(dir / "optimized.cu"));
            e["source_hash"] = hashHex(readText(dir / "optimized.cu"));
        });
    } else if (t == "forge") {
        // Lower a speedup below 1x and re-hash everything consistently (promotion.json's file list
        // and the index): every hash matches, but the evidence no longer passes the gates.
        Json p = Json::parse(readText(dir / "performance.json"));
        p["shapes"][0]["speedup"] = 0.5;
        writeText(dir / "performance.json", p.dump(2));
        Json promo = Json::parse(readText(dir / "promotion.json"));
        for (Json& f : promo["files"])
            if (f["path"] == "performance.json")
                f["hash"] = hashHex(readText(dir / "performance.json"));
        writeText(dir / "promotion.json", promo.dump(2));
        rewriteIndex([&](Json& e) {
            for (Json& f : e["files"])
                f["hash"] = hashHex(readText(dir / f["path"].get<std::string>()));
        });
    } else if (t == "forge-record") {
        Json promo = Json::parse(readText(dir / "promotion.json"));
        promo["speedup"]["geomean"] = 9.9;
        writeText(dir / "promotion.json", promo.dump(2));
        rewriteIndex([&](Json& e) {
            e["geomean_speedup"] = 9.9;
            for (Json& f : e["files"])
                f["hash"] = hashHex(readText(dir / f["path"].get<std::string>()));
        });
    } else if (t == "index-op") {
        rewriteIndex([&](Json& e) { e["op"] = "matmul"; });
    } else if (t == "index-status") {
        rewriteIndex([&](Json& e) { e.erase("status"); });
    } else if (t == "index-speedup") {
        rewriteIndex([&](Json& e) { e["geomean_speedup"] = 3.0; });
    } else if (t == "garbage-index") {
        writeText(reg.indexFile(), "{\"schema_version\": 1, \"kernels\": [");
    }
    auto drift = reg.check();
    KF_VERIFY_OK(drift);
    QVERIFY2(!drift->empty(), "the drift went unnoticed");
    const RegistryDrift& d = drift->front();
    QCOMPARE(d.severity, RegistryDrift::Severity::Error);
    QVERIFY2(qs(d.file).endsWith(file), d.file.c_str());
    QVERIFY2(qs(d.problem).contains(problem), d.problem.c_str());
    QVERIFY(!d.hint.empty());
}

void TestRegistry::orphanFolderIsAWarningAndPruneRemovesIt()
{
    const Registry reg(m_regDir);
    KF_VERIFY_OK(reg.promote(test::passingInput(m_taskDir, "optimized.cu")));
    fs::create_directories(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v7");
    writeText(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v7" / "optimized.cu", "half written");
    fs::create_directories(m_regDir / ".staging" / "cuda_x_v1.123");
    auto drift = reg.check();
    KF_VERIFY_OK(drift);
    QCOMPARE(drift->size(), size_t(2));
    for (const RegistryDrift& d : drift.value()) {
        QCOMPARE(d.severity, RegistryDrift::Severity::Warning);
        QVERIFY(qs(d.hint).contains("--prune"));
    }
    drift = reg.check(true);
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
    QVERIFY(!fs::exists(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v7"));
    drift = reg.check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
    QCOMPARE(reg.load()->kernels.size(), size_t(1));
}

void TestRegistry::removeDeletesEntryAndFolder()
{
    const Registry reg(m_regDir);
    auto a = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    auto b = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    KF_VERIFY_OK(a);
    KF_VERIFY_OK(b);
    KF_VERIFY_OK(reg.remove(a->entry->id));
    QVERIFY(!fs::exists(reg.entryDirectory(a->entry->id)));
    auto index = reg.load();
    KF_VERIFY_OK(index);
    QCOMPARE(index->kernels.size(), size_t(1));
    QCOMPARE(index->kernels[0].id, b->entry->id);
    auto missing = reg.remove(a->entry->id);
    QVERIFY(!missing);
    QVERIFY(qs(missing.error().why).contains("has no kernel " + qs(a->entry->id)));
    QVERIFY(qs(missing.error().hint).contains(qs(b->entry->id)));
    auto drift = reg.check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
}

void TestRegistry::deprecateKeepsTheEntryWithItsReason()
{
    const Registry reg(m_regDir);
    auto a = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    KF_VERIFY_OK(a);
    auto d = reg.deprecate(a->entry->id, "superseded by v2");
    KF_VERIFY_OK(d);
    QVERIFY(d->deprecated());
    auto e = reg.entry(a->entry->id);
    KF_VERIFY_OK(e);
    QCOMPARE(qs(e->status), QString("deprecated"));
    QCOMPARE(qs(e->deprecationReason), QString("superseded by v2"));
    QVERIFY(!e->deprecatedAt.empty());
    auto drift = reg.check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty()); // deprecating changes the index, never the evidence
    QVERIFY(!reg.deprecate("cuda_nope_v1", "x"));
}

void TestRegistry::thresholdIsPerRegistry()
{
    const Registry strict(m_regDir / "strict");
    const Registry lenient(m_regDir / "lenient");
    KF_VERIFY_OK(strict.setThreshold(1.5));
    KF_VERIFY_OK(lenient.setThreshold(1.0));
    const PromotionInput in = test::passingInput(m_taskDir, "optimized.cu", {1.05});
    auto s = strict.promote(in);
    auto l = lenient.promote(in);
    KF_VERIFY_OK(s);
    KF_VERIFY_OK(l);
    QVERIFY(!s->entry);
    QVERIFY(qs(s->gates.firstFailure()->detail).contains("threshold 1.50×"));
    QVERIFY(l->entry);
    QVERIFY(lenient.promotion(l->entry->id).value().json["threshold"] == Json(1.0));
    auto bad = strict.setThreshold(0.9);
    QVERIFY(!bad);
    QVERIFY(qs(bad.error().why).contains("≥ 1.0"));
    QCOMPARE(strict.load()->threshold, 1.5);
    // check() re-judges with the threshold the kernel was promoted under, not today's.
    KF_VERIFY_OK(lenient.setThreshold(2.0));
    auto drift = lenient.check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
}

void TestRegistry::sanitizerPolicyIsPerRegistryAndRecorded()
{
    const Registry strict(m_regDir / "strict");
    const Registry lenient(m_regDir / "lenient");
    QVERIFY(strict.load()->sanitizerPolicy == SanitizerPolicy::IfAvailable);   // the default
    KF_VERIFY_OK(strict.setSanitizerPolicy(SanitizerPolicy::Required));
    KF_VERIFY_OK(lenient.setSanitizerPolicy(SanitizerPolicy::Off));
    QVERIFY(strict.load()->sanitizerPolicy == SanitizerPolicy::Required);
    QVERIFY(Json::parse(readText(m_regDir / "strict" / kRegistryIndexFile))["sanitizer_policy"] == Json("required"));
    // Verified on a host without compute-sanitizer, as the runner writes it.
    PromotionInput in = test::passingInput(m_taskDir, "optimized.cu");
    Json c = in.correctness->document();
    c.erase("signature");
    c["sanitizer"] = {{"ran", false}, {"requested", true}, {"reason", "no compute-sanitizer on gpu-7"}, {"tool_version", ""},
                      {"tool_path", ""}, {"shapes", Json::array()}, {"seed", ""}, {"duration_ms", 0},
                      {"tools", Json::array()}, {"findings", Json::array()}};
    in.correctness = test::asReport(c);
    auto s = strict.promote(in);
    KF_VERIFY_OK(s);
    QVERIFY(!s->entry);
    QCOMPARE(qs(s->gates.firstFailure()->gate), QString("sanitizer"));
    QVERIFY2(qs(s->gates.firstFailure()->hint).contains("kforge registry set-sanitizer-policy if_available"),
             s->gates.firstFailure()->hint.c_str());
    auto l = lenient.promote(in);
    KF_VERIFY_OK(l);
    QVERIFY2(l->entry, l->gates.sentence().c_str());
    auto p = lenient.promotion(l->entry->id);
    KF_VERIFY_OK(p);
    QVERIFY(p->sanitizer->policy == SanitizerPolicy::Off);
    QCOMPARE(qs(p->sanitizer->outcome), QString("not_run"));
    QVERIFY(p->sanitizer->tools.empty());
    QVERIFY(p->json["gates"][3]["not_run"] == Json(true));
    QVERIFY(p->json["gates"][3]["passed"] == Json(false));
    // check() re-judges under the policy the kernel was promoted under, not today's.
    KF_VERIFY_OK(lenient.setSanitizerPolicy(SanitizerPolicy::Required));
    auto drift = lenient.check();
    KF_VERIFY_OK(drift);
    QVERIFY2(drift->empty(), drift->empty() ? "" : drift->front().problem.c_str());
    // Back to the default: the key leaves the index, so an older KernelForge still reads it.
    KF_VERIFY_OK(strict.setSanitizerPolicy(SanitizerPolicy::IfAvailable));
    QVERIFY(!Json::parse(readText(m_regDir / "strict" / kRegistryIndexFile)).contains("sanitizer_policy"));
}

void TestRegistry::malformedIndexIsRefusedWithPointer_data()
{
    QTest::addColumn<QString>("index");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("why");
    QTest::newRow("future schema") << R"({"schema_version": 2, "kernels": []})" << "/schema_version" << "not supported";
    QTest::newRow("threshold below 1") << R"({"schema_version": 1, "speedup_threshold": 0.5, "kernels": []})"
                                       << "/speedup_threshold" << "≥ 1.0";
    QTest::newRow("unknown key") << R"({"schema_version": 1, "kernels": [], "extra": 1})" << "/extra" << "";
    QTest::newRow("kernels not an array") << R"({"schema_version": 1, "kernels": {}})" << "/kernels" << "";
    QTest::newRow("bad id") << R"({"schema_version": 1, "kernels": [{"id": "../evil_v1"}]})" << "/kernels/0/id" << "not a registry ID";
    QTest::newRow("sanitizer policy not a string") << R"({"schema_version": 1, "sanitizer_policy": true, "kernels": []})"
                                                   << "/sanitizer_policy" << "";
    QTest::newRow("unknown sanitizer policy") << R"({"schema_version": 1, "sanitizer_policy": "sometimes", "kernels": []})"
                                              << "/sanitizer_policy" << "required, if_available or off";
}

void TestRegistry::malformedIndexIsRefusedWithPointer()
{
    QFETCH(QString, index);
    QFETCH(QString, pointer);
    QFETCH(QString, why);
    fs::create_directories(m_regDir);
    writeText(m_regDir / kRegistryIndexFile, index.toStdString());
    auto r = Registry(m_regDir).load();
    QVERIFY(!r);
    QCOMPARE(qs(r.error().pointer), pointer);
    QVERIFY2(qs(r.error().why).contains(why), r.error().why.c_str());
    QVERIFY(qs(r.error().file).endsWith(kRegistryIndexFile));
    // A damaged index is never overwritten by a promote.
    auto out = Registry(m_regDir).promote(test::passingInput(m_taskDir, "optimized.cu"));
    QVERIFY(!out);
    QCOMPARE(readText(m_regDir / kRegistryIndexFile), index.toStdString());
}

void TestRegistry::resolveDirectoryOrder()
{
    const fs::path root = m_tmp->path().toStdString();
    qunsetenv("KF_REGISTRY");
    qputenv("XDG_DATA_HOME", QByteArray::fromStdString((root / "xdg").string()));
    auto d = Registry::resolveDirectory("", m_taskDir);
    KF_VERIFY_OK(d);
    QCOMPARE(qs(d->string()), qs((root / "xdg" / "KernelForge" / "registry").string()));
    writeText(root / kWorkspaceFile, R"({"schema_version": 1, "registry": "team-registry"})");
    d = Registry::resolveDirectory("", m_taskDir);
    KF_VERIFY_OK(d);
    QCOMPARE(qs(d->string()), qs((root / "team-registry").string()));
    qputenv("KF_REGISTRY", QByteArray::fromStdString((root / "env").string()));
    d = Registry::resolveDirectory("", m_taskDir);
    KF_VERIFY_OK(d);
    QCOMPARE(qs(d->string()), qs((root / "env").string()));
    d = Registry::resolveDirectory((root / "explicit").string(), m_taskDir);
    KF_VERIFY_OK(d);
    QCOMPARE(qs(d->string()), qs((root / "explicit").string()));
    qunsetenv("KF_REGISTRY");
    writeText(root / kWorkspaceFile, R"({"schema_version": 1, "registy": "typo"})");
    d = Registry::resolveDirectory("", m_taskDir);
    QVERIFY(!d);
    QVERIFY(qs(d.error().file).endsWith(kWorkspaceFile));
    QCOMPARE(qs(d.error().pointer), QString("/registy"));
    qunsetenv("XDG_DATA_HOME");
}

void TestRegistry::entryTaskIsTheTaskReducedToTheKernel()
{
    const Registry reg(m_regDir);
    auto out = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    KF_VERIFY_OK(out);
    auto t = reg.entryTask(out->entry->id);
    KF_VERIFY_OK(t);
    QCOMPARE(t->candidates.size(), size_t(1));
    QCOMPARE(qs(t->candidates[0].file), QString("optimized.cu"));
    QCOMPARE(qs(fs::weakly_canonical(t->directory).string()), qs(fs::weakly_canonical(reg.entryDirectory(out->entry->id)).string()));
    QCOMPARE(t->testShapes.size(), loadTask(m_taskDir)->testShapes.size());
}

void TestRegistry::includeFoldersTravelWithTheKernel()
{
    Json task = Json::parse(readText(m_taskDir / "task.json"));
    task["compile"]["include_dirs"] = {"include"};
    writeText(m_taskDir / "task.json", task.dump(2));
    fs::create_directories(m_taskDir / "include" / "detail");
    writeText(m_taskDir / "include" / "detail" / "tile.cuh", "#pragma once\n");
    const Registry reg(m_regDir);
    auto out = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    KF_VERIFY_OK(out);
    QVERIFY2(out->entry, out->gates.sentence().c_str());
    QVERIFY(fs::is_regular_file(reg.entryDirectory(out->entry->id) / "include" / "detail" / "tile.cuh"));
    auto drift = reg.check();
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
    writeText(reg.entryDirectory(out->entry->id) / "include" / "detail" / "tile.cuh", "#pragma once // edited\n");
    drift = reg.check();
    KF_VERIFY_OK(drift);
    QCOMPARE(drift->size(), size_t(1));
    QVERIFY(qs(drift->front().file).endsWith("include/detail/tile.cuh"));
    // A header edited after the runs voids the evidence, as an edited kernel does.
    const PromotionInput before = test::passingInput(m_taskDir, "optimized.cu");
    writeText(m_taskDir / "include" / "detail" / "tile.cuh", "#pragma once\n#define FAST 1\n");
    auto stale = reg.promote(before);
    KF_VERIFY_OK(stale);
    QVERIFY(!stale->entry);
    QCOMPARE(qs(stale->gates.firstFailure()->gate), QString("evidence"));
    QVERIFY(qs(stale->gates.firstFailure()->detail).contains("headers"));
}

void TestRegistry::includeFoldersMustBeSubfolders_data()
{
    QTest::addColumn<QString>("folder");
    QTest::newRow("parent") << "../common";
    QTest::newRow("absolute") << "/usr/include";
    QTest::newRow("the task folder itself") << ".";
    QTest::newRow("escapes after a subfolder") << "include/../../x";
}

void TestRegistry::includeFoldersMustBeSubfolders()
{
    QFETCH(QString, folder);
    Json task = Json::parse(readText(m_taskDir / "task.json"));
    task["compile"]["include_dirs"] = {folder.toStdString()};
    auto t = parseTask(task, "task.json", m_taskDir);
    QVERIFY(!t);
    QCOMPARE(qs(t.error().pointer), QString("/compile/include_dirs/0"));
    QVERIFY2(qs(t.error().why).contains("must be a subfolder of the task folder"), t.error().why.c_str());
}

void TestRegistry::pruneTouchesOnlyWhatTheRegistryMade()
{
    const Registry reg(m_regDir);
    KF_VERIFY_OK(reg.promote(test::passingInput(m_taskDir, "optimized.cu")));
    fs::create_directories(m_regDir / "notes");      // a user's folder: not ours to judge or delete
    writeText(m_regDir / "notes" / "todo.txt", "keep me");
    // A temp copy of the index from a killed writer: reported, then pruned.
    writeText(m_regDir / "verified_kernels.json.tmp.4242.7", "{");
    auto found = reg.check(false);
    KF_VERIFY_OK(found);
    QCOMPARE(found->size(), size_t(1));
    QCOMPARE(qs(found->front().file), QString("verified_kernels.json.tmp.4242.7"));
    auto drift = reg.check(true);
    KF_VERIFY_OK(drift);
    QVERIFY(drift->empty());
    QVERIFY(!fs::exists(m_regDir / "verified_kernels.json.tmp.4242.7"));
    QVERIFY(fs::exists(m_regDir / "notes" / "todo.txt"));
    // Without its index, version folders are never pruned as orphans.
    fs::remove(reg.indexFile());
    drift = reg.check(true);
    KF_VERIFY_OK(drift);
    QCOMPARE(drift->size(), size_t(1));
    QCOMPARE(drift->front().severity, RegistryDrift::Severity::Error);
    QVERIFY(qs(drift->front().problem).contains("is missing but the folder holds 1 kernel version(s)"));
    QVERIFY(qs(drift->front().hint).contains("--reindex"));
    QVERIFY(fs::exists(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v1" / "promotion.json"));
}

// Issue 23: deleting verified_kernels.json must not make two verified versions look like debris.
void TestRegistry::lostIndexIsRefusedNeverPrunedAndRebuilt()
{
    const Registry reg(m_regDir);
    QStringList ids;
    for (double speedup : {1.3, 1.5}) {
        auto out = reg.promote(test::passingInput(m_taskDir, "optimized.cu", {speedup}));
        KF_VERIFY_OK(out);
        QVERIFY2(out->entry, out->gates.sentence().c_str());
        ids << qs(out->entry->id);
    }
    // A half-written third version (a killed promote) that must not be listed.
    fs::create_directories(m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v3");
    fs::copy_file(m_regDir / ids[1].toStdString() / "promotion.json", m_regDir / "cuda_softmax_h100_fp32_b8192-d4096_v3" / "promotion.json");
    fs::remove(m_regDir / "verified_kernels.json");

    auto listed = reg.load();
    QVERIFY(!listed);
    QVERIFY2(qs(listed.error().why).contains("is missing but the folder holds 3 kernel version(s)"), listed.error().message().c_str());
    QVERIFY(qs(listed.error().hint).contains("--reindex"));
    auto promoted = reg.promote(test::passingInput(m_taskDir, "optimized.cu"));
    QVERIFY2(!promoted, "a promote wrote a fresh index over a lost one");
    auto drift = reg.check(true);
    KF_VERIFY_OK(drift);
    QVERIFY(!drift->empty());
    for (const QString& id : ids)
        QVERIFY2(fs::exists(m_regDir / id.toStdString() / "optimized.cu"), qPrintable(id + " was pruned"));

    auto report = reg.reindex();
    KF_VERIFY_OK(report);
    const std::vector<std::string>& skipped = report->skipped;
    QCOMPARE(skipped.size(), size_t(1));
    QVERIFY2(qs(skipped.front()).startsWith("cuda_softmax_h100_fp32_b8192-d4096_v3: promotion.json names"), skipped.front().c_str());
    auto rebuilt = reg.load();
    KF_VERIFY_OK(rebuilt);
    QCOMPARE(rebuilt->kernels.size(), size_t(2));
    QCOMPARE(qs(rebuilt->kernels[0].id), ids[0]);
    QCOMPARE(qs(rebuilt->kernels[1].id), ids[1]);
    QCOMPARE(rebuilt->kernels[1].geomeanSpeedup, 1.5);
    auto clean = reg.check(false);
    KF_VERIFY_OK(clean);
    for (const RegistryDrift& d : clean.value())
        QVERIFY2(d.severity != RegistryDrift::Severity::Error || d.file == "cuda_softmax_h100_fp32_b8192-d4096_v3",
                 (d.file + ": " + d.problem).c_str());
    // A readable index is never rebuilt.
    QVERIFY(!reg.reindex());
}

QTEST_GUILESS_MAIN(TestRegistry)
#include "tst_registry.moc"
