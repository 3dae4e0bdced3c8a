// Repro bundles (engine/repro/Repro.h) without a GPU: a synthetic failing case of
// tests/gpu/tasks/broken_add/writes_nan.cu is exported, loaded back, refused when a copy was
// edited, and compared with synthetic re-runs; run folders under the cache are named and pruned.
#include "engine/core/Hash.h"
#include "engine/repro/Repro.h"
#include "engine/protocol/VerifyReport.h"
#include "engine/runner/RunSettings.h"
#include "engine/verify/CaseFiles.h"
#include "engine/verify/Compare.h"
#include "engine/verify/Shrink.h"
#include "reprofixture.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

using namespace kf;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const QString kBrokenAdd = QString(KF_SOURCE_DIR) + "/tests/gpu/tasks/broken_add";
using test::CaseSpec;
using test::kCandidate;
using test::kNaN;
using test::readText;
using test::snapshot;
using test::writeSyntheticCase;
using test::WrittenCase;

void writeText(const fs::path& file, const std::string& text)
{
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
}

#define VERIFY_WRITTEN(w) QVERIFY2((w).error.empty(), (w).error.c_str())

// A fresh copy of broken_add under `root`/`name`, optionally with an include folder.
Result<Task> copyBrokenAdd(const QString& root, const QString& name, bool withInclude = false)
{
    const fs::path to = fs::path(root.toStdString()) / name.toStdString();
    fs::create_directories(to);
    fs::copy(kBrokenAdd.toStdString(), to, fs::copy_options::recursive);
    if (withInclude) {
        json j = json::parse(readText(to / "task.json"));
        j["compile"] = {{"include_dirs", {"inc"}}};
        writeText(to / "task.json", j.dump(2));
        fs::create_directories(to / "inc" / "detail");
        writeText(to / "inc" / "helper.cuh", "#pragma once\n#define KF_HELPER 1\n");
        writeText(to / "inc" / "detail" / "more.cuh", "#pragma once\n");
    }
    return loadTask(to);
}

} // namespace

class TestRepro : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();

    void exportWritesAWholeBundle();
    void exportCarriesIncludeFolders();
    void exportRefuses_data();
    void exportRefuses();

    void loadRefusesEditedBundles_data();
    void loadRefusesEditedBundles();
    void loadAcceptsAReformattedTaskJson();

    void compareReproduction_data();
    void compareReproduction();

    void failureKindFallsBackToTheChecks_data();
    void failureKindFallsBackToTheChecks();

    void runDumpDirsLiveInTheCache();
    void pruneKeepsTheNewestAndTheOpenCase();

private:
    // A valid bundle of the synthetic case at a new folder under m_dir.
    fs::path freshBundle(const QString& name);

    QTemporaryDir m_dir;
    Task m_task;          // a copy of broken_add
    fs::path m_case;      // the synthetic failing case of writes_nan.cu
    fs::path m_bundle;    // exported from m_case, never edited
};

void TestRepro::initTestCase()
{
    QVERIFY2(m_dir.isValid(), qPrintable(m_dir.errorString()));
    auto task = copyBrokenAdd(m_dir.path(), "task");
    KF_VERIFY_OK(task);
    m_task = std::move(task.value());
    m_case = fs::path(m_dir.filePath("case").toStdString());
    VERIFY_WRITTEN(writeSyntheticCase(m_case, m_task, {}));
    m_bundle = fs::path(m_dir.filePath("bundle").toStdString());
    auto r = exportRepro(m_case, m_task, m_bundle);
    KF_VERIFY_OK(r);
}

fs::path TestRepro::freshBundle(const QString& name)
{
    const fs::path dir = fs::path(m_dir.filePath(name).toStdString());
    fs::copy(m_bundle, dir, fs::copy_options::recursive);
    return dir;
}

void TestRepro::exportWritesAWholeBundle()
{
    const fs::path& b = m_bundle;
    QVERIFY(fs::is_regular_file(b / "repro.json"));
    const json repro = json::parse(readText(b / "repro.json"));
    QCOMPARE(repro["schema_version"].get<int>(), kReproSchemaVersion);
    QCOMPARE(repro["kind"].get<std::string>(), std::string("kernelforge-repro"));
    QCOMPARE(repro["failure_kind"].get<std::string>(), std::string("mismatch"));
    QCOMPARE(repro["task"]["name"].get<std::string>(), std::string("broken_add"));
    QCOMPARE(repro["task"]["hash"].get<std::string>(), taskHash(m_task));
    QCOMPARE(repro["candidate"]["file"].get<std::string>(), std::string(kCandidate));
    QCOMPARE(repro["shape"]["values"]["N"].get<int>(), 7);
    QCOMPARE(repro["trial"].get<int>(), 1);
    QCOMPARE(repro["seed"].get<std::string>(), std::string("0x1234"));

    // The task as it was: task.json and every candidate, byte for byte.
    QCOMPARE(readText(b / "task" / "task.json"), readText(m_task.directory / "task.json"));
    for (const Candidate& c : m_task.candidates) {
        QVERIFY2(fs::is_regular_file(b / "task" / c.file), c.file.c_str());
        QCOMPARE(readText(b / "task" / c.file), readText(m_task.directory / c.file));
    }
    // The case, with its tensor files.
    for (const char* f : {"case.json", "inputs/a.npy", "inputs/b.npy", "expected/c.npy", "actual/c.npy"})
        QVERIFY2(fs::is_regular_file(b / "case" / f), f);

    auto loaded = loadRepro(b);
    KF_VERIFY_OK(loaded);
    QCOMPARE(loaded->kind, FailureKind::Mismatch);
    QCOMPARE(loaded->task.name, std::string("broken_add"));
    QCOMPARE(loaded->taskDir, b / "task");
    QCOMPARE(loaded->caseDir, b / "case");
    QVERIFY(loaded->kase.shape.values == (std::map<std::string, std::int64_t, std::less<>>{{"N", 7}}));
    QCOMPARE(loaded->kase.shape.label, std::string("prime"));
    QCOMPARE(loaded->kase.trial, 1);
    QCOMPARE(loaded->kase.seed, std::string("0x1234"));
    QCOMPARE(loaded->kase.candidateFile, std::string(kCandidate));
    QVERIFY(!loaded->createdAt.empty());
}

void TestRepro::exportCarriesIncludeFolders()
{
    auto task = copyBrokenAdd(m_dir.path(), "task-inc", true);
    KF_VERIFY_OK(task);
    QCOMPARE(task->compile.includeDirs, std::vector<std::string>{"inc"});
    const fs::path kase = fs::path(m_dir.filePath("case-inc").toStdString());
    VERIFY_WRITTEN(writeSyntheticCase(kase, *task, {}));
    const fs::path bundle = fs::path(m_dir.filePath("bundle-inc").toStdString());
    KF_VERIFY_OK(exportRepro(kase, *task, bundle));
    QCOMPARE(readText(bundle / "task" / "inc" / "helper.cuh"), readText(task->directory / "inc" / "helper.cuh"));
    QVERIFY(fs::is_regular_file(bundle / "task" / "inc" / "detail" / "more.cuh"));
    KF_VERIFY_OK(loadRepro(bundle));

    // A header is part of the task hash: editing the bundle's copy is refused, naming the task.
    writeText(bundle / "task" / "inc" / "helper.cuh", "#pragma once\n#define KF_HELPER 2\n");
    auto edited = loadRepro(bundle);
    QVERIFY(!edited.ok());
    QCOMPARE(edited.error().file, (bundle / "task" / "task.json").string());
    QVERIFY2(edited.error().message().find("include folder") != std::string::npos, edited.error().message().c_str());
}

void TestRepro::exportRefuses_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("message");
    QTest::newRow("a case of another task") << "other task" << "saved for task other_add, not for broken_add";
    QTest::newRow("a case of another version of the task") << "other hash" << "another version of task broken_add";
    QTest::newRow("the candidate was edited after the case") << "edited source" << "writes_nan.cu was edited";
    QTest::newRow("a non-empty target folder") << "non-empty target" << "not empty";
    QTest::newRow("no case folder") << "no case" << "case.json";
}

void TestRepro::exportRefuses()
{
    QFETCH(QString, what);
    QFETCH(QString, message);
    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
    auto task = copyBrokenAdd(m_dir.path(), "refuse-task-" + tag);
    KF_VERIFY_OK(task);
    const fs::path kase = fs::path(m_dir.filePath("refuse-case-" + tag).toStdString());
    const fs::path bundle = fs::path(m_dir.filePath("refuse-bundle-" + tag).toStdString());
    CaseSpec spec;
    if (what == "other task")
        spec.taskName = "other_add";
    if (what == "other hash")
        spec.taskHash = std::string(32, '0');
    if (what != "no case")
        VERIFY_WRITTEN(writeSyntheticCase(kase, *task, spec));
    if (what == "edited source")
        writeText(task->directory / kCandidate, readText(task->directory / kCandidate) + "// a fix in progress\n");
    if (what == "non-empty target") {
        fs::create_directories(bundle);
        writeText(bundle / "notes.txt", "mine");
    }

    auto r = exportRepro(kase, *task, bundle);
    QVERIFY2(!r.ok(), "exportRepro accepted the case");
    QVERIFY2(r.error().message().find(message.toStdString()) != std::string::npos, r.error().message().c_str());
    // Nothing is written on refusal: a folder the user had keeps only what was in it.
    if (what == "non-empty target")
        QCOMPARE(snapshot(bundle), (std::map<std::string, std::string>{{"notes.txt", "mine"}}));
    else
        QVERIFY2(!fs::exists(bundle / "repro.json"), "a refused export left a repro.json");
}

void TestRepro::loadRefusesEditedBundles_data()
{
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("file");      // relative to the bundle; empty: not checked
    QTest::addColumn<QString>("message");   // in Error::message()
    QTest::addColumn<QString>("pointer");   // Error::pointer; empty: not checked
    QTest::newRow("task.json tolerance changed") << "tolerance" << "task/task.json" << "no longer hashes" << "";
    QTest::newRow("candidate source edited") << "source" << "task/writes_nan.cu" << "--candidate-source" << "";
    QTest::newRow("candidate source deleted") << "delete source" << "" << "writes_nan.cu" << "";
    QTest::newRow("schema_version 2") << "schema" << "repro.json" << "schema version 1" << "/schema_version";
    QTest::newRow("not a repro bundle") << "kind" << "repro.json" << "not a KernelForge repro bundle" << "/kind";
    QTest::newRow("unknown failure_kind") << "failure kind" << "repro.json" << "unknown failure kind 'exploded'"
                                          << "/failure_kind";
    QTest::newRow("missing repro.json") << "no repro.json" << "repro.json" << "repro.json" << "";
    QTest::newRow("missing case folder") << "no case" << "" << "case.json" << "";
}

void TestRepro::loadRefusesEditedBundles()
{
    QFETCH(QString, edit);
    QFETCH(QString, file);
    QFETCH(QString, message);
    QFETCH(QString, pointer);
    const fs::path b = freshBundle("edited-" + QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_'));
    KF_VERIFY_OK(loadRepro(b)); // the row's edit is what breaks it

    auto editRepro = [&](const char* key, const json& value) {
        json j = json::parse(readText(b / "repro.json"));
        j[key] = value;
        writeText(b / "repro.json", j.dump(2));
    };
    if (edit == "tolerance") {
        json j = json::parse(readText(b / "task" / "task.json"));
        j["outputs"][0]["tolerance"] = {{"rtol", 0.5}, {"atol", 0.5}};
        writeText(b / "task" / "task.json", j.dump(2));
    } else if (edit == "source") {
        writeText(b / "task" / kCandidate, readText(b / "task" / kCandidate) + "// fixed?\n");
    } else if (edit == "delete source") {
        fs::remove(b / "task" / kCandidate);
    } else if (edit == "schema") {
        editRepro("schema_version", 2);
    } else if (edit == "kind") {
        editRepro("kind", "kernelforge-case");
    } else if (edit == "failure kind") {
        editRepro("failure_kind", "exploded");
    } else if (edit == "no repro.json") {
        fs::remove(b / "repro.json");
    } else if (edit == "no case") {
        fs::remove_all(b / "case");
    } else {
        QFAIL("unknown edit");
    }

    auto r = loadRepro(b);
    QVERIFY2(!r.ok(), "loadRepro accepted an edited bundle");
    const std::string msg = r.error().message();
    QVERIFY2(msg.find(message.toStdString()) != std::string::npos, msg.c_str());
    if (!file.isEmpty())
        QCOMPARE(fs::path(r.error().file).lexically_normal(), (b / file.toStdString()).lexically_normal());
    if (!pointer.isEmpty())
        QCOMPARE(r.error().pointer, pointer.toStdString());
    if (edit == "source")
        QVERIFY2(msg.find("edited") != std::string::npos, msg.c_str());
}

void TestRepro::loadAcceptsAReformattedTaskJson()
{
    // The hash is over canonical JSON: re-indenting task.json (and keys in another order) is no edit.
    const fs::path b = freshBundle("reformatted");
    const json j = json::parse(readText(b / "task" / "task.json"));
    writeText(b / "task" / "task.json", "\n\n" + j.dump(7) + "\n\n\n");
    QVERIFY(readText(b / "task" / "task.json") != readText(m_task.directory / "task.json"));
    auto r = loadRepro(b);
    KF_VERIFY_OK(r);
    QCOMPARE(r->kind, FailureKind::Mismatch);
}

void TestRepro::compareReproduction_data()
{
    QTest::addColumn<QString>("rerun");
    QTest::addColumn<bool>("reproduced");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<bool>("sameSet");
    QTest::addColumn<bool>("bitwise");
    QTest::addColumn<qint64>("mismatchesNow");
    QTest::addColumn<qint64>("differing");
    QTest::addColumn<qint64>("drift");
    QTest::addColumn<double>("driftMax");
    QTest::addColumn<QString>("sentence"); // the summary starts with it

    const double step = std::ldexp(1.0, -20);
    QTest::newRow("identical re-run") << "identical" << true << "mismatch" << true << true << qint64(1) << qint64(0)
                                      << qint64(0) << 0.0 << "reproduced: the same 1 elements are wrong, and the outputs "
                                                             "are bit-for-bit the same";
    QTest::newRow("NaN moved to another index") << "moved" << true << "mismatch" << false << false << qint64(1) << qint64(2)
                                                << qint64(0) << 0.0 << "reproduced (mismatch), but 2 elements differ";
    QTest::newRow("another value within tolerance") << "within tolerance" << true << "mismatch" << true << false
                                                    << qint64(1) << qint64(0) << qint64(0) << 0.0
                                                    << "reproduced: the same 1 elements are wrong (the values differ)";
    QTest::newRow("the reference drifted in one element") << "drift" << true << "mismatch" << true << true << qint64(1)
                                                           << qint64(0) << qint64(1) << step << "reproduced: the same 1";
    QTest::newRow("the re-run passed") << "passed" << false << "none" << false << false << qint64(0) << qint64(1)
                                       << qint64(0) << 0.0 << "not reproduced";
    QTest::newRow("the re-run left an element unwritten") << "unwritten" << false << "unwritten" << false << false
                                                          << qint64(2) << qint64(1) << qint64(0) << 0.0
                                                          << "failed differently: unwritten now, mismatch before";
}

void TestRepro::compareReproduction()
{
    QFETCH(QString, rerun);
    QFETCH(bool, reproduced);
    QFETCH(QString, kind);
    QFETCH(bool, sameSet);
    QFETCH(bool, bitwise);
    QFETCH(qint64, mismatchesNow);
    QFETCH(qint64, differing);
    QFETCH(qint64, drift);
    QFETCH(double, driftMax);
    QFETCH(QString, sentence);

    auto bundle = loadRepro(m_bundle);
    KF_VERIFY_OK(bundle);
    CaseSpec spec;
    if (rerun == "moved")
        spec.actual = {1, 2, 3, 4, 5, kNaN, 7};
    else if (rerun == "within tolerance")
        spec.actual[0] = std::nextafter(1.0f, 2.0f);
    else if (rerun == "drift")
        spec.expected[5] += std::ldexp(1.0, -20);
    else if (rerun == "passed")
        spec.actual = {1, 2, 3, 4, 5, 6, 7};
    else if (rerun == "unwritten")
        spec.unwritten = {6};

    const fs::path dir = fs::path(m_dir.filePath("rerun-" + QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_'))
                                      .toStdString());
    const WrittenCase w = writeSyntheticCase(dir, m_task, spec);
    VERIFY_WRITTEN(w);
    QCOMPARE(w.trial["passed"].get<bool>(), rerun == "passed");
    // A passing trial saves no case: the re-run hands an empty folder.
    auto trial = kf::protocol::Trial::fromJson(w.trial);
    KF_VERIFY_OK(trial);
    auto r = kf::compareReproduction(*bundle, trial.value(), rerun == "passed" ? fs::path() : dir);
    KF_VERIFY_OK(r);
    const ReproComparison& c = *r;
    QCOMPARE(c.reproduced, reproduced);
    QCOMPARE(qs(std::string(failureKindName(c.kind))), kind);
    QCOMPARE(c.sameMismatchSet, sameSet);
    QCOMPARE(c.actualBitwiseEqual, bitwise);
    QCOMPARE(c.mismatchesBefore, std::int64_t(1));
    QCOMPARE(c.mismatchesNow, std::int64_t(mismatchesNow));
    QCOMPARE(c.elementsDiffering, std::int64_t(differing));
    QCOMPARE(c.referenceDriftElements, std::int64_t(drift));
    QCOMPARE(c.referenceDriftMax, driftMax);
    QVERIFY2(qs(c.sentence).startsWith(sentence), c.sentence.c_str());
    QCOMPARE(qs(c.sentence).contains("the reference changed in 1 elements"), drift == 1);

    const json j = toJson(c);
    QCOMPARE(j["reproduced"].get<bool>(), reproduced);
    QCOMPARE(qs(j["kind"].get<std::string>()), kind);
    QCOMPARE(j["same_mismatch_set"].get<bool>(), sameSet);
    QCOMPARE(j["elements_differing"].get<std::int64_t>(), std::int64_t(differing));
    QCOMPARE(j["reference_drift"]["elements"].get<std::int64_t>(), std::int64_t(drift));
    QCOMPARE(j["reference_drift"]["max_abs"].get<double>(), driftMax);
    QCOMPARE(j["summary"].get<std::string>(), c.sentence);
}

void TestRepro::failureKindFallsBackToTheChecks_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("kind");
    QTest::newRow("a NaN, with the trial report") << "mismatch with report" << "mismatch";
    QTest::newRow("a NaN, checks only") << "mismatch" << "mismatch";
    QTest::newRow("an unwritten element, checks only") << "unwritten" << "unwritten";
    QTest::newRow("a launch error, checks only") << "launch" << "launch";
    QTest::newRow("the runs disagreed, checks only") << "nondeterministic" << "nondeterministic";
    QTest::newRow("a guard violation, checks only") << "guard" << "guard";
    QTest::newRow("a modified input, checks only") << "modified input" << "modified_input";
}

void TestRepro::failureKindFallsBackToTheChecks()
{
    QFETCH(QString, what);
    QFETCH(QString, kind);
    CaseSpec spec;
    spec.withTrialReport = what == "mismatch with report";
    if (what == "unwritten")
        spec.unwritten = {6};
    if (what == "launch" || what == "nondeterministic" || what == "guard" || what == "modified input")
        spec.actual = {1, 2, 3, 4, 5, 6, 7}; // the outputs pass; the failure sentence is the cause
    const fs::path dir = fs::path(m_dir.filePath("kind-" + QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_'))
                                      .toStdString());
    VERIFY_WRITTEN(writeSyntheticCase(dir, m_task, spec));
    auto c = readCase(dir);
    KF_VERIFY_OK(c);
    QCOMPARE(c->trialReport.is_object() && !c->trialReport.empty(), spec.withTrialReport);
    if (what == "launch")
        c->failure = "launch error: CUDA_ERROR_ILLEGAL_ADDRESS in launch 1 (add_writes_nan)";
    if (what == "nondeterministic")
        c->failure = "the two runs disagree: c differs in 3 of 7 elements (max difference 0.5)";
    // The runner's sentences (device/runner/Verifier.cpp), as a case without its report keeps them.
    if (what == "guard")
        c->failure = "guard violation: c was written past its end (the first changed canary byte is 0 bytes after the end, "
                     "4 canary bytes changed, seen after launch 1)";
    if (what == "modified input")
        c->failure = "input a was modified by the candidate (28 bytes differ from the pristine copy, the first at byte 0)";
    QCOMPARE(qs(std::string(failureKindName(failureKindOfCase(*c)))), kind);
}

void TestRepro::runDumpDirsLiveInTheCache()
{
    QTemporaryDir cache;
    QVERIFY(cache.isValid());
    const QByteArray saved = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
    const fs::path runs = fs::path(cache.path().toStdString()) / "kernelforge" / "runs";

    const fs::path first = newRunDumpDir("broken_add", "kernels/writes_nan.cu");
    QCOMPARE(first.parent_path(), runs);
    QVERIFY2(qs(first.filename().string()).endsWith("-broken_add-writes_nan"), first.c_str());
    QVERIFY2(first.filename().string().find(':') == std::string::npos, "':' is not allowed in folder names everywhere");
    // The run saves into it; a second and a third run in the same second get their own folders.
    fs::create_directories(first);
    const fs::path second = newRunDumpDir("broken_add", "writes_nan.cu");
    fs::create_directories(second);
    const fs::path third = newRunDumpDir("broken_add", "writes_nan.cu");
    QVERIFY(second != first);
    QVERIFY(third != second && third != first);
    QCOMPARE(second.parent_path(), runs);

    if (saved.isNull())
        qunsetenv("XDG_CACHE_HOME");
    else
        qputenv("XDG_CACHE_HOME", saved);
}

void TestRepro::pruneKeepsTheNewestAndTheOpenCase()
{
    QTemporaryDir cache;
    QVERIFY(cache.isValid());
    const QByteArray saved = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
    const fs::path runs = fs::path(cache.path().toStdString()) / "kernelforge" / "runs";
    const char* names[] = {"2024-01-01T00-00-00Z-t-a", "2024-01-02T00-00-00Z-t-a", "2024-01-03T00-00-00Z-t-a",
                           "2024-01-04T00-00-00Z-t-a", "2024-01-05T00-00-00Z-t-a"};
    for (const char* n : names)
        fs::create_directories(runs / n / "00-prime-N7-t1");
    writeText(runs / "stray-file.txt", "not a run");

    // The case open in the inspector lives in the second-oldest run: it stays.
    pruneRunDumpDirs(2, runs / names[1] / "00-prime-N7-t1");
    QVERIFY(!fs::exists(runs / names[0]));
    QVERIFY(fs::exists(runs / names[1] / "00-prime-N7-t1"));
    QVERIFY(!fs::exists(runs / names[2]));
    QVERIFY(fs::exists(runs / names[3]));
    QVERIFY(fs::exists(runs / names[4]));
    QVERIFY2(fs::exists(runs / "stray-file.txt"), "only run folders are pruned");

    // The open run folder itself (with a trailing separator and a dot) is kept as well.
    pruneRunDumpDirs(1, fs::path((runs / names[3]).string() + "/./"));
    QVERIFY(!fs::exists(runs / names[1]));
    QVERIFY(fs::exists(runs / names[3]));
    QVERIFY(fs::exists(runs / names[4]));

    // With nothing open, only the newest stays; pruning a missing folder is no error.
    pruneRunDumpDirs(1);
    QVERIFY(!fs::exists(runs / names[3]));
    QVERIFY(fs::exists(runs / names[4]));
    pruneRunDumpDirs(0);
    QVERIFY(!fs::exists(runs / names[4]));
    fs::remove_all(runs);
    pruneRunDumpDirs(3);

    if (saved.isNull())
        qunsetenv("XDG_CACHE_HOME");
    else
        qputenv("XDG_CACHE_HOME", saved);
}

QTEST_GUILESS_MAIN(TestRepro)
#include "tst_repro.moc"
