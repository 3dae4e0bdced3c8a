// Importing community problems (engine/agent/Import.h): GPU MODE task.yml files read through our
// YAML reader with errors at line:column; the helper's proposal read strictly (every bad field
// named); the task folder written whole or not at all; a Python without torch is an environment
// error in one sentence. With the build's Python and torch (KF_TORCH_PYTHON), every fixture of
// tests/data/import, our own problems in both formats, imports to the expected task or is refused
// naming the construct.
#include "testutil.h"

#include "engine/agent/Import.h"
#include "engine/core/Files.h"
#include "engine/task/Task.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace kf;
using namespace kf::agent;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kFixtures = std::string(KF_TEST_DATA_DIR) + "/import";

// A proposal folder that reads: a TorchScript task (bias + gelu) with its reference, one original
// and one sample.
json writeProposalFolder(const fs::path& dir)
{
    fs::create_directories(dir / "originals");
    fs::copy_file(fs::path(KF_TEST_DATA_DIR) / "generate/gen_script_bias_gelu_fp16/bias_gelu.pt", dir / "reference.pt");
    for (const char* f : {"originals/problem.py", "samples/t0/inputs/x.npy", "samples/t0/expected/y.npy"})
        if (!writeFileAtomic(dir / f, "test data\n"))
            qFatal("cannot write %s", f);
    auto task =
        json::parse(*readFileBytes(std::string(KF_TEST_DATA_DIR) + "/generate/gen_script_bias_gelu_fp16/task.json"));
    task.erase("candidates");
    task["reference"]["torchscript"] = "reference.pt";
    json shape = task["shapes"]["tests"][0];
    shape.erase("label");
    return {{"schema_version", 1},
            {"format", "kernelbench"},
            {"torch_version", "2.11.0"},
            {"task", task},
            {"originals", {"problem.py"}},
            {"samples", {{{"label", "t0"}, {"shape", shape}, {"inputs", {{"x", "samples/t0/inputs/x.npy"}}},
                          {"expected", {{"y", "samples/t0/expected/y.npy"}}}}}},
            {"notes", {"a note"}}};
}

bool haveTorchPython() { return std::string(KF_TORCH_PYTHON).size() > 0; }

} // namespace

class TestImport : public QObject {
    Q_OBJECT
private slots:
    void gpuModeTaskYml_data();
    void gpuModeTaskYml();
    void proposalFields_data();
    void proposalFields();
    void writeTaskWholeOrNothing();
    void pythonWithoutTorch();
    void kernelBenchFixtures_data();
    void kernelBenchFixtures();
    void gpuModeFixtures_data();
    void gpuModeFixtures();
};

void TestImport::gpuModeTaskYml_data()
{
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("error");   // empty: reads; then `check` is a JSON pointer=value or a note
    QTest::addColumn<QString>("check");
    const QString head = "files:\n  - {name: reference.py, source: reference.py}\nlang: \"py\"\n";
    QTest::newRow("flow maps, null seed") << head + "tests:\n  - {\"size\": 127, \"seed\": null}\n  - {size: 8, seed: 3}\n" << ""
                                          << "/tests/0/size=127";
    QTest::newRow("block description") << head + "description: |\n  Two\n  lines.\ntests: [{size: 1}]\n" << ""
                                       << "/description=\"Two\\nlines.\\n\"";
    QTest::newRow("unknown keys are noted") << head + "tests: [{size: 1}]\nleaderboard: x\n" << ""
                                            << "note:leaderboard is not used";
    QTest::newRow("lang cu") << "files: []\nlang: cu\ntests: [{size: 1}]\n" << "t.yml:2:7: at /lang: lang: cu keeps the reference in C++"
                             << "";
    QTest::newRow("tests not a list") << head + "tests: {size: 1}\n" << "t.yml:4:8: at /tests:" << "";
    QTest::newRow("an entry not a map") << head + "tests: [4096]\n" << "at /tests/0: each entry is a mapping" << "";
    QTest::newRow("a nested value") << head + "tests: [{size: [1, 2]}]\n" << "at /tests/0/size: entry values" << "";
    QTest::newRow("no tests") << head + "benchmarks: [{size: 1}]\n" << "lists no tests" << "";
    QTest::newRow("a file without source") << "files:\n  - {name: reference.py}\nlang: py\ntests: [{size: 1}]\n"
                                           << "t.yml:2:5: at /files/0: missing required key \"source\"" << "";
    QTest::newRow("not YAML") << "files: [\n" << "t.yml:" << "";
}

void TestImport::gpuModeTaskYml()
{
    QFETCH(QString, yaml);
    QFETCH(QString, error);
    QFETCH(QString, check);
    auto spec = readGpuModeTaskYml(yaml.toStdString(), "t.yml");
    if (!error.isEmpty()) {
        QVERIFY(!spec);
        QVERIFY2(qs(spec.error().message()).contains(error), spec.error().message().c_str());
        return;
    }
    KF_VERIFY_OK(spec);
    if (check.startsWith("note:")) {
        QCOMPARE(spec->notes.size(), size_t(1));
        QVERIFY(qs(spec->notes.front()).contains(check.mid(5)));
        return;
    }
    const QStringList kv = check.split('=');
    QCOMPARE(qs(spec->spec.at(json::json_pointer(kv[0].toStdString())).dump()), kv[1]);
}

void TestImport::proposalFields_data()
{
    QTest::addColumn<QString>("pointer");   // the field to change
    QTest::addColumn<QString>("value");     // its new JSON value; "delete" removes it
    QTest::addColumn<QString>("error");     // in the message; empty: reads
    QTest::newRow("as written") << "/notes" << "[\"a note\"]" << "";
    QTest::newRow("an unknown key") << "/extra" << "1" << "at /extra";
    QTest::newRow("schema version 2") << "/schema_version" << "2" << "at /schema_version: schema_version must be 1";
    QTest::newRow("an unknown format") << "/format" << "\"tritonbench\"" << "at /format";
    QTest::newRow("no notes") << "/notes" << "delete" << "missing required key \"notes\"";
    QTest::newRow("a task with candidates") << "/task/candidates" << "[]" << "at /task/candidates: an imported task has no candidates";
    QTest::newRow("an original outside") << "/originals" << "[\"../problem.py\"]" << "at /originals";
    QTest::newRow("a missing original") << "/originals" << "[\"other.py\"]" << "\"other.py\" is not a file";
    QTest::newRow("a sample path that climbs") << "/samples/0/inputs/x" << "\"samples/../../etc/passwd.npy\"" << "at /samples/0/inputs/x";
    QTest::newRow("a sample outside samples/") << "/samples/0/inputs/x" << "\"reference.pt\"" << "at /samples/0/inputs/x";
    QTest::newRow("a sample of no tensor") << "/samples/0/inputs/q" << "\"samples/t0/inputs/x.npy\"" << "names a tensor q the task lacks";
    QTest::newRow("a bad dtype in the task") << "/task/inputs/0/dtype" << "\"float\"" << "(its task): at /inputs/0/dtype: unknown dtype";
    QTest::newRow("a reference that is not there") << "/task/reference/torchscript" << "\"other.pt\"" << "other.pt";
}

void TestImport::proposalFields()
{
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, error);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    json p = writeProposalFolder(dir);
    const json::json_pointer ptr(pointer.toStdString());
    if (value == "delete")
        p[ptr.parent_pointer()].erase(ptr.back());
    else
        p[ptr] = json::parse(value.toStdString());
    auto read = readImportProposal(p, "proposal.json", dir);
    if (error.isEmpty()) {
        KF_VERIFY_OK(read);
        QCOMPARE(qs(read->format), QString("kernelbench"));
        QCOMPARE(read->samples.size(), size_t(1));
        QVERIFY(read->task["candidates"].empty());
        return;
    }
    QVERIFY2(!read, "a bad proposal was read");
    QVERIFY2(qs(read.error().message()).contains(error), read.error().message().c_str());
}

void TestImport::writeTaskWholeOrNothing()
{
    QTemporaryDir tmp;
    const fs::path from = fs::path(tmp.path().toStdString()) / "proposal";
    auto p = readImportProposal(writeProposalFolder(from), "proposal.json", from);
    KF_VERIFY_OK(p);
    const fs::path to = fs::path(tmp.path().toStdString()) / "tasks" / "imported_task";
    auto written = writeImportedTask(*p, from, to);
    KF_VERIFY_OK(written);
    auto task = loadTask(to);
    KF_VERIFY_OK(task);
    QVERIFY(task->candidates.empty());
    for (const char* f : {"reference.pt", "imported/problem.py", "imported/import.json", "samples/t0/inputs/x.npy"})
        QVERIFY2(fs::is_regular_file(to / f), f);
    const json record = json::parse(*readFileBytes(to / "imported" / "import.json"));
    QCOMPARE(qs(record["notes"][0].get<std::string>()), QString("a note"));
    // A folder that is there and not empty is not overwritten; no staging folder is left behind.
    auto again = writeImportedTask(*p, from, to);
    QVERIFY(!again);
    QVERIFY(qs(again.error().why).contains("already exists and is not empty"));

    // "-o out/" names the folder out.
    auto slash = writeImportedTask(*p, from, fs::path(tmp.path().toStdString()) / "tasks" / "second/");
    KF_VERIFY_OK(slash);
    QCOMPARE(qs(slash->filename().string()), QString("second"));

    // A failure after staging began (an original gone) leaves neither the staging folder nor the
    // folders made on the way.
    fs::remove(from / "originals" / "problem.py");
    auto broken = writeImportedTask(*p, from, fs::path(tmp.path().toStdString()) / "made" / "on" / "the-way");
    QVERIFY(!broken);
    QVERIFY2(qs(broken.error().why).contains("cannot copy problem.py"), broken.error().message().c_str());
    QVERIFY(!fs::exists(fs::path(tmp.path().toStdString()) / "made"));
    for (const auto& e : fs::directory_iterator(tmp.path().toStdString()))
        QVERIFY2(e.path().filename().string().rfind(".import-", 0) != 0, e.path().c_str());
    for (const auto& e : fs::directory_iterator(to.parent_path()))
        QVERIFY2(e.path().filename().string().rfind(".import-", 0) != 0, e.path().c_str());
}

void TestImport::pythonWithoutTorch()
{
    // A Python that says what the helper says when torch is missing: exit 3, one line.
    QTemporaryDir tmp;
    const fs::path fake = fs::path(tmp.path().toStdString()) / "python";
    KF_VERIFY_OK(writeFileAtomic(fake, "#!/bin/sh\necho \"kernelforge_import: torch cannot be imported (No module named 'torch')\" >&2\nexit 3\n"));
    fs::permissions(fake, fs::perms::owner_all);
    ImportOptions o;
    o.python = fake.string();
    o.out = fs::path(tmp.path().toStdString()) / "out";
    auto r = importKernelBench(kFixtures + "/kernelbench/row_sum.py", o);
    QVERIFY(!r);
    QCOMPARE(qs(r.error().kind), QString(kImportNoTorch));
    QVERIFY2(qs(r.error().message()).contains("import needs Python with torch: " + qs(fake.string())
                                              + " says \"torch cannot be imported (No module named 'torch')\""),
             r.error().message().c_str());
    QVERIFY(!fs::exists(o.out));
    // A Python that is not there at all.
    o.python = "/nonexistent/python3";
    auto none = importKernelBench(kFixtures + "/kernelbench/row_sum.py", o);
    QVERIFY(!none);
    QCOMPARE(qs(none.error().kind), QString(kImportNoTorch));
}

void TestImport::kernelBenchFixtures_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("inputs");    // "name:dtype[shape]" joined by spaces; or the refusal
    QTest::addColumn<QString>("outputs");
    QTest::newRow("elementwise") << "ew_gelu_bias" << "" << "x:fp32[BATCH_SIZE,DIM] bias:fp32[DIM]" << "y:fp32[BATCH_SIZE,DIM]";
    QTest::newRow("reduction") << "row_sum" << "" << "x:fp32[BATCH_SIZE,ROWS,COLS]" << "y:fp32[BATCH_SIZE,1,COLS]";
    QTest::newRow("linear with weights, fp16")
        << "linear_relu" << "fp16"
        << "x:fp16[BATCH_SIZE,IN_FEATURES] linear_weight:fp16[OUT_FEATURES,IN_FEATURES] linear_bias:fp16[OUT_FEATURES]"
        << "y:fp16[BATCH_SIZE,OUT_FEATURES]";
    QTest::newRow("get_init_inputs") << "scaled_layernorm" << ""
                                     << "x:fp32[BATCH_SIZE,NORMALIZED_SHAPE_0,NORMALIZED_SHAPE_1] "
                                        "norm_weight:fp32[NORMALIZED_SHAPE_0,NORMALIZED_SHAPE_1] "
                                        "norm_bias:fp32[NORMALIZED_SHAPE_0,NORMALIZED_SHAPE_1]"
                                     << "y:fp32[BATCH_SIZE,NORMALIZED_SHAPE_0,NORMALIZED_SHAPE_1]";
    QTest::newRow("dropout in training") << "dropout_train" << "" << "refused:dropout_train.py:10: forward calls dropout" << "";
    QTest::newRow("random in forward") << "rand_in_forward" << "" << "refused:forward calls torch.randn (a random op)" << "";
    QTest::newRow("an int output") << "int_output" << "" << "refused:forward returns an int" << "";
    QTest::newRow("a dict input") << "dict_input" << "" << "refused:forward input 1 (operands) is a dict" << "";
}

void TestImport::kernelBenchFixtures()
{
    if (!haveTorchPython())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QFETCH(QString, fixture);
    QFETCH(QString, dtype);
    QFETCH(QString, inputs);
    QFETCH(QString, outputs);
    QTemporaryDir tmp;
    ImportOptions o;
    o.python = KF_TORCH_PYTHON;
    o.dtype = dtype.toStdString();
    o.out = fs::path(tmp.path().toStdString()) / fixture.toStdString();
    auto r = importKernelBench(kFixtures + "/kernelbench/" + fixture.toStdString() + ".py", o);
    if (inputs.startsWith("refused:")) {
        QVERIFY(!r);
        QVERIFY2(qs(r.error().message()).contains(inputs.mid(8)), r.error().message().c_str());
        QVERIFY(qs(r.error().file).endsWith(fixture + ".py"));
        QVERIFY(!fs::exists(o.out));
        return;
    }
    KF_VERIFY_OK(r);
    auto task = loadTask(r->taskDir);
    KF_VERIFY_OK(task);
    auto describe = [](const std::vector<TensorSpec>& list) {
        QStringList out;
        for (const TensorSpec& t : list)
            out << qs(t.name + ":" + std::string(dtypeName(t.dtype)) + "[") + qs([&] {
                       std::string s;
                       for (size_t i = 0; i < t.shape.size(); ++i)
                           s += (i ? "," : "") + t.shape[i];
                       return s;
                   }()) + "]";
        return out.join(' ');
    };
    QCOMPARE(describe(task->inputs), inputs);
    QCOMPARE(describe(task->outputs), outputs);
    QVERIFY(task->candidates.empty());
    QCOMPARE(task->reference.kind, Reference::Kind::TorchScript);
    QVERIFY(task->testShapes.size() >= 3);
    QCOMPARE(task->benchmarkShapes.size(), size_t(1));
    const bool half = dtype == "fp16" || dtype == "bf16";
    for (const TensorSpec& out : task->outputs) {
        QCOMPARE(out.tolerance.rtol, half ? 1e-2 : 1e-4);
        QCOMPARE(out.tolerance.atolMode, Tolerance::AtolMode::Absolute);
    }
    QVERIFY(fs::is_regular_file(r->taskDir / "imported" / (fixture.toStdString() + ".py")));
}

void TestImport::gpuModeFixtures_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("inputs");
    QTest::addColumn<QString>("outputs");
    QTest::addColumn<QString>("note");
    QTest::newRow("vector add") << "vecadd_py" << "x:fp16 y:fp16" << "out:fp16" << "";
    QTest::newRow("row max") << "rowmax_py" << "x:fp32" << "y:fp32" << "";
    QTest::newRow("preallocated output") << "gemm_prealloc_py" << "a:fp32 b:fp32" << "c:fp32" << "preallocated";
    QTest::newRow("own checker") << "custom_check_py" << "logits:fp32" << "y:fp32" << "check_implementation";
}

void TestImport::gpuModeFixtures()
{
    if (!haveTorchPython())
        QSKIP("no Python that imports torch was found at configure time: the importer cannot run here");
    QFETCH(QString, fixture);
    QFETCH(QString, inputs);
    QFETCH(QString, outputs);
    QFETCH(QString, note);
    QTemporaryDir tmp;
    ImportOptions o;
    o.python = KF_TORCH_PYTHON;
    o.out = fs::path(tmp.path().toStdString()) / fixture.toStdString();
    auto r = importGpuMode(kFixtures + "/gpumode/" + fixture.toStdString(), o);
    KF_VERIFY_OK(r);
    auto task = loadTask(r->taskDir);
    KF_VERIFY_OK(task);
    QStringList in, out;
    for (const TensorSpec& t : task->inputs)
        in << qs(t.name + ":" + std::string(dtypeName(t.dtype)));
    for (const TensorSpec& t : task->outputs)
        out << qs(t.name + ":" + std::string(dtypeName(t.dtype)));
    QCOMPARE(in.join(' '), inputs);
    QCOMPARE(out.join(' '), outputs);
    QVERIFY(!task->testShapes.empty() && !task->benchmarkShapes.empty());
    if (!note.isEmpty()) {
        QStringList notes;
        for (const std::string& n : r->notes)
            notes << qs(n);
        QVERIFY2(notes.join('\n').contains(note), qPrintable(notes.join('\n')));
    }
    QVERIFY(fs::is_regular_file(r->taskDir / "imported" / "task.yml"));
}

QTEST_GUILESS_MAIN(TestImport)
#include "tst_import.moc"
