// Taking an agent's kernel back (engine/agent/CandidateAdd.h) and the static scan beside it
// (engine/analysis/SourceScan.h): every bad plan is refused with its own file, line or JSON
// pointer and leaves the task untouched; a good one, as a file or fenced in the source, is
// listed and loads; each scan rule fires where it should and stays silent on comments, strings
// and our own kernels.
#include "testutil.h"

#include "engine/agent/CandidateAdd.h"
#include "engine/analysis/SourceScan.h"
#include "engine/compile/Compiler.h"
#include "engine/core/Files.h"
#include "engine/task/Task.h"

#include <QDirIterator>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace kf;
using namespace kf::agent;
namespace fs = std::filesystem;

namespace {

const char* kKernel = "extern \"C\" __global__ void vadd(const float* a, const float* b, float* c, int n)\n"
                      "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n)\n        c[i] = a[i] + b[i];\n}\n";
const char* kPlan = R"P({"description": "one element per thread",
 "launches": [{"kernel": "vadd", "grid": "ceil_div(N, 256)", "block": 256, "args": ["a", "b", "c", {"scalar": "N"}]}]})P";

fs::path copyVectorAdd(const QTemporaryDir& tmp)
{
    const fs::path to = fs::path(tmp.path().toStdString()) / "vector_add";
    fs::copy(fs::path(KF_SOURCE_DIR) / "resources/examples/vector_add", to, fs::copy_options::recursive);
    return to;
}

std::string fenced(const std::string& plan, const std::string& kernel = kKernel)
{
    return "/* Adds two vectors.\n```json\n" + plan + "\n```\n*/\n" + kernel;
}

QString rulesFound(const std::string& source)
{
    QStringList out;
    for (const ScanFinding& f : scanSource(source))
        out << QString("%1@%2:%3").arg(qs(f.rule)).arg(f.line).arg(f.column);
    return out.join(' ');
}

} // namespace

class TestCandidateAdd : public QObject {
    Q_OBJECT
private slots:
    void badPlans_data();
    void badPlans();
    void goodPlanFileIsAdded();
    void fencedPlanInPlace();
    void fenceForms_data();
    void fenceForms();
    void kernelMissingFromTheFileIsNotAdded();
    void scanRules_data();
    void scanRules();
    void scanIsSilentOnOurKernels();
};

void TestCandidateAdd::badPlans_data()
{
    QTest::addColumn<QString>("plan");       // written to plan.json; empty: none
    QTest::addColumn<QString>("source");     // the .cu; empty: kKernel
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("file");       // Error::file ends with this
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("why");
    const QString good = kPlan;
    QTest::newRow("not JSON") << "{\"launches\": [\n  {\"kernel\": \"vadd\",\n  ]}" << "" << "" << "plan.json:3:3" << ""
                              << "not valid JSON";
    QTest::newRow("an array") << "[1, 2]" << "" << "" << "plan.json" << "/" << "must be a JSON object";
    QTest::newRow("no launches") << "{\"description\": \"x\"}" << "" << "" << "plan.json" << "/" << "launches";
    QTest::newRow("misspelt key") << QString(kPlan).replace("\"block\"", "\"gird\": 1, \"block\"") << "" << ""
                                  << "plan.json" << "/launches/0/gird" << "gird";
    QTest::newRow("grid a boolean") << QString(kPlan).replace("\"ceil_div(N, 256)\"", "true") << "" << ""
                                    << "plan.json" << "/launches/0/grid" << "found true";
    QTest::newRow("unknown tensor") << QString(kPlan).replace("\"c\", {", "\"q\", {") << "" << "" << "plan.json"
                                    << "/launches/0/args/2" << "q";
    QTest::newRow("bad scratch dtype") << QString(kPlan).replace("\"launches\"", "\"scratch\": [{\"name\": \"s\", \"dtype\": "
                                                                                "\"float\", \"count\": 4}], \"launches\"")
                                       << "" << "" << "plan.json" << "/scratch/0/dtype" << "float";
    QTest::newRow("plan twice") << good << qs(fenced(kPlan)) << "" << "k.cu" << "" << "given twice";
    QTest::newRow("no plan at all") << "" << "" << "" << "k.cu" << "" << "no launch plan";
    QTest::newRow("two fences") << "" << "/*\n```json\n{}\n```\n```json\n{}\n```\n*/\n" << "" << "k.cu:5" << ""
                                << "two ```json fences";
    QTest::newRow("unterminated fence") << "" << "// plan:\n// ```json\n// {}\n" << "" << "k.cu:2" << "" << "not closed";
    QTest::newRow("bad JSON in a fence") << "" << qs(fenced("{\"launches\": [}")) << "" << "k.cu:3:15" << ""
                                         << "not valid JSON";
    QTest::newRow("nested 100 deep") << QString(kPlan).replace("\"description\"", "\"x\": " + QString("[").repeated(100)
                                                                          + QString("]").repeated(100) + ", \"description\"")
                                     << "" << "" << "plan.json" << "" << "nested deeper than 64 levels";
    QTest::newRow("bad JSON in a // fence") << "" << "// k\n//   ```json\n//   {\"launches\": [}\n//   ```\n" << "" << "k.cu:3:20"
                                            << "" << "not valid JSON";
    QTest::newRow("name taken") << good << "" << "optimized.cu" << "task.json" << "/candidates" << "already has a candidate";
    QTest::newRow("name not plain") << good << "" << "../up.cu" << "k.cu" << "" << "not a plain file name";
}

void TestCandidateAdd::badPlans()
{
    QFETCH(QString, plan);
    QFETCH(QString, source);
    QFETCH(QString, name);
    QFETCH(QString, file);
    QFETCH(QString, pointer);
    QFETCH(QString, why);
    QTemporaryDir tmp;
    const fs::path task = copyVectorAdd(tmp);
    const fs::path work = tmp.path().toStdString();
    KF_VERIFY_OK(writeFileAtomic(work / "k.cu", source.isEmpty() ? std::string(kKernel) : source.toStdString()));
    AddCandidateRequest r;
    r.taskDir = task;
    r.source = work / "k.cu";
    r.name = name.toStdString();
    r.compile = false;
    if (!plan.isEmpty()) {
        KF_VERIFY_OK(writeFileAtomic(work / "plan.json", plan.toStdString()));
        r.planFile = work / "plan.json";
    }
    const auto before = readFileBytes(task / "task.json");
    auto added = addCandidate(r);
    QVERIFY2(!added, "a bad plan was accepted");
    const Error& e = added.error();
    QVERIFY2(qs(e.file).endsWith(file), qPrintable(qs(e.message())));
    QCOMPARE(qs(e.pointer), pointer);
    QVERIFY2(qs(e.message()).contains(why), qPrintable(qs(e.message())));
    // Nothing changed.
    QCOMPARE(qs(*readFileBytes(task / "task.json")), qs(*before));
    QVERIFY(!fs::exists(task / "k.cu"));
}

void TestCandidateAdd::goodPlanFileIsAdded()
{
    QTemporaryDir tmp;
    const fs::path task = copyVectorAdd(tmp);
    const fs::path work = tmp.path().toStdString();
    KF_VERIFY_OK(writeFileAtomic(work / "k.cu", kKernel));
    KF_VERIFY_OK(writeFileAtomic(work / "plan.json", std::string(kPlan).insert(1, "\"file\": \"other.cu\", ")));
    AddCandidateRequest r;
    r.taskDir = task;
    r.source = work / "k.cu";
    r.planFile = work / "plan.json";
    r.name = "agent";
    r.compile = false;
    auto added = addCandidate(r);
    KF_VERIFY_OK(added);
    QVERIFY(added->added);
    QCOMPARE(qs(added->name), QString("agent.cu"));
    QCOMPARE(qs(*readFileBytes(task / "agent.cu")), QString(kKernel));
    QCOMPARE(added->notes.size(), size_t(1));   // the plan's "file" was replaced
    QVERIFY(added->findings.empty());
    auto loaded = loadTask(task);
    KF_VERIFY_OK(loaded);
    const Candidate* c = loaded->findCandidate("agent.cu");
    QVERIFY(c);
    QCOMPARE(qs(c->description), QString("one element per thread"));
    QCOMPARE(qs(c->launches.at(0).kernel), QString("vadd"));
    // The other candidates are still there, in order, and task.json's keys keep their order.
    QCOMPARE(qs(loaded->candidates.front().file), QString("naive.cu"));
    QVERIFY(readFileBytes(task / "task.json")->find("\"schema_version\": 1,\n  \"name\"") != std::string::npos);
}

void TestCandidateAdd::fencedPlanInPlace()
{
    // The agent wrote <task>/agent.cu itself: only task.json changes.
    QTemporaryDir tmp;
    const fs::path task = copyVectorAdd(tmp);
    const std::string source = fenced(kPlan) + "__device__ int calls;\n";
    KF_VERIFY_OK(writeFileAtomic(task / "agent.cu", source));
    AddCandidateRequest r;
    r.taskDir = task;
    r.source = task / "agent.cu";
    r.description = "from the fence";
    const bool haveNvrtc = nvrtcVersion().ok();
    r.compile = haveNvrtc;
    auto added = addCandidate(r);
    KF_VERIFY_OK(added);
    QVERIFY(added->added);
    if (haveNvrtc)
        QCOMPARE(added->compiledFor, (std::vector<std::string>{"sm_90", "sm_80"}));
    QCOMPARE(qs(*readFileBytes(task / "agent.cu")), qs(source));
    auto loaded = loadTask(task);
    KF_VERIFY_OK(loaded);
    QCOMPARE(qs(loaded->findCandidate("agent.cu")->description), QString("from the fence"));
    // Adding it again is refused: the name is taken.
    auto again = addCandidate(r);
    QVERIFY(!again);
    QVERIFY(qs(again.error().why).contains("already has a candidate agent.cu"));
}

void TestCandidateAdd::fenceForms_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("line");       // 0: no fence
    QTest::addColumn<QString>("json");
    QTest::newRow("block comment") << "/* x\n```json\n{\"a\": 1}\n```\n*/\nint x;" << 3 << "{\"a\": 1}\n";
    QTest::newRow("starred block") << "/*\n * ```json\n * {\"a\": 1}\n * ```\n */" << 3 << " {\"a\": 1}\n";
    QTest::newRow("line comments") << "\n// k\n// ```json\n// {\"a\":\n//  1}\n// ```\nint x;" << 4 << " {\"a\":\n  1}\n";
    QTest::newRow("fence after the first comment is ignored") << "/* k */\n/*\n```json\n{}\n```\n*/" << 0 << "";
    QTest::newRow("code first") << "int x; /* ```json\n{}\n``` */" << 0 << "";
    QTest::newRow("no comment") << "" << 0 << "";
}

void TestCandidateAdd::fenceForms()
{
    QFETCH(QString, source);
    QFETCH(int, line);
    QFETCH(QString, json);
    auto f = fencedPlan(source.toStdString(), "k.cu");
    KF_VERIFY_OK(f);
    QCOMPARE(f->has_value(), line > 0);
    if (line > 0) {
        QCOMPARE((*f)->line, line);
        QCOMPARE(qs((*f)->json), json);
    }
}

void TestCandidateAdd::kernelMissingFromTheFileIsNotAdded()
{
    if (!nvrtcVersion())
        QSKIP("NVRTC is not available on this machine: the compile step cannot run");
    QTemporaryDir tmp;
    const fs::path task = copyVectorAdd(tmp);
    const fs::path work = tmp.path().toStdString();
    KF_VERIFY_OK(writeFileAtomic(work / "k.cu", kKernel));
    KF_VERIFY_OK(writeFileAtomic(work / "plan.json", QString(kPlan).replace("\"vadd\"", "\"vadd2\"").toStdString()));
    AddCandidateRequest r;
    r.taskDir = task;
    r.source = work / "k.cu";
    r.planFile = work / "plan.json";
    auto added = addCandidate(r);
    KF_VERIFY_OK(added);
    QVERIFY(!added->added);
    QVERIFY(!added->diagnostics.empty());
    const QString message = qs(added->diagnostics.front().message);
    QVERIFY2(message.contains("names kernel \"vadd2\"") && message.contains("plan.json at /launches/0/kernel"), qPrintable(message));
    QVERIFY(!fs::exists(task / "k.cu"));
    QVERIFY(!loadTask(task)->findCandidate("k.cu"));
}

void TestCandidateAdd::scanRules_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("found");
    const QString head = "__global__ void k(const float* a, float* b, int n) {\n";
    QTest::newRow("a __device__ global written") << "__device__ float last;\n" + head + "    last = a[0];\n}\n"
                                                 << "device-global-written@3:5";
    QTest::newRow("an element of one written") << "__device__ int seen[4];\n" + head + "    seen[0] += 1;\n}\n"
                                               << "device-global-written@3:5";
    QTest::newRow("incremented") << "__device__ int n2;\n" + head + "    ++n2;\n}\n" << "device-global-written@3:7";
    QTest::newRow("a launch counter") << "__device__ unsigned calls;\n" + head + "    atomicAdd(&calls, 1u);\n}\n"
                                      << "launch-counter@3:16";
    QTest::newRow("an atomic exchange") << "__device__ int flag;\n" + head + "    atomicExch(&flag, 1);\n}\n"
                                        << "device-global-written@3:17";
    QTest::newRow("read only is fine") << "__device__ float table[2] = {1, 2};\n" + head + "    b[0] = table[1];\n}\n" << "";
    QTest::newRow("__constant__ is fine") << "__constant__ float c0;\n" + head + "    b[0] = c0;\n}\n" << "";
    QTest::newRow("a local of the same name") << "__device__ float scale_table[4];\n" + head
                                                     + "    float scale_table = .5f;\n    scale_table *= a[0];\n    b[0] = scale_table;\n}\n"
                                              << "";
    QTest::newRow("a template declaration names no global") << "__device__ Pair<int, float> t;\n" + head
                                                                  + "    atomicAdd((int*)b, 1);\n}\n" << "";
    QTest::newRow("a counter behind a cast") << "__device__ unsigned long long calls;\n" + head
                                                    + "    atomicAdd((unsigned long long*)&calls, 1ull);\n    atomicAdd(reinterpret_cast<unsigned long long*>(&calls), 1ull);\n}\n"
                                             << "launch-counter@3:37 launch-counter@4:54";
    QTest::newRow("a read in a later argument is not a write") << "__device__ int table[2];\n" + head
                                                                      + "    atomicAdd((int*)b, table[0]);\n}\n" << "";
    QTest::newRow("float compares in a helper are fine") << "__device__ float pick(float a, float b) { return a > b ? a : b; }\n"
                                                                + head + "    b[0] = pick(a[0], a[1]);\n}\n" << "";
    QTest::newRow("clock steering") << head + "    if (clock64() % 2) b[0] = 1;\n}\n" << "clock-control@2:9";
    QTest::newRow("global timer in asm") << head + "    unsigned long long t;\n    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n}\n"
                                         << "inline-asm@3:5 clock-control@3:18";
    QTest::newRow("a pointer as an integer") << head + "    if ((unsigned long long)a == 0x1000) return;\n}\n"
                                             << "pointer-value@2:29";
    QTest::newRow("reinterpret_cast to size_t") << head + "    size_t p = reinterpret_cast<size_t>(b);\n}\n"
                                                << "pointer-value@2:41";
    QTest::newRow("pointers compared") << head + "    if (a == b) return;\n}\n" << "pointer-value@2:9";
    QTest::newRow("an alignment test is fine") << head + "    bool v = ((size_t)a % 16) == 0 && (reinterpret_cast<uintptr_t>(b) & 15) == 0;\n}\n"
                                               << "";
    QTest::newRow("the words in comments and strings") << "// __device__ int c; c = 1; clock64() asm\n" + head
                                                              + "    /* if (a == b) atomicAdd(&c, 1); */ const char* s = \"clock64() asm\";\n}\n"
                                                       << "";
    QTest::newRow("an include line") << "#include <kf/prelude.cuh> // clock64() a == b\n" + head + "    b[0] = 1;\n}\n" << "";
    QTest::newRow("a macro's body is code") << "__device__ unsigned calls;\n#define BUMP() atomicAdd(&calls, 1u)\n#define STAMP \\\n    clock64()\n"
                                                   + head + "    BUMP();\n}\n"
                                            << "launch-counter@2:27 clock-control@4:5";
    QTest::newRow("inside a namespace") << "namespace {\n__device__ int calls;\n" + head + "    atomicAdd(&calls, 1);\n    if (a == b) return;\n}\n}\n"
                                        << "launch-counter@4:16 pointer-value@5:9";
    QTest::newRow("inside extern C and a named namespace") << "extern \"C\" {\nnamespace k {\n__device__ float last;\n" + head
                                                                  + "    last = 1.f;\n}\n}\n}\n"
                                                           << "device-global-written@5:5";
    QTest::newRow("a functional cast") << head + "    if (uintptr_t(a) == 0x2000) return;\n}\n" << "pointer-value@2:19";
    QTest::newRow("std::uintptr_t and a parenthesised cast")
        << head + "    if (reinterpret_cast<std::uintptr_t>(a) == 0x7f00) return;\n    if ((size_t)(b) == 0) return;\n}\n"
        << "pointer-value@2:42 pointer-value@3:18";
    QTest::newRow("pointers compared in a __device__ helper")
        << "__device__ bool same(const float* x, const float* y) { return x == y; }\n" << "pointer-value@1:63";
}

void TestCandidateAdd::scanRules()
{
    QFETCH(QString, source);
    QFETCH(QString, found);
    QCOMPARE(rulesFound(source.toStdString()), found);
}

void TestCandidateAdd::scanIsSilentOnOurKernels()
{
    int scanned = 0;
    for (const QString& root :
         {QString(KF_SOURCE_DIR) + "/resources/examples", QString(KF_TEST_DATA_DIR) + "/generate"}) {
        QDirIterator it(root, {"*.cu"}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            auto bytes = readFileBytes(file.toStdString());
            KF_VERIFY_OK(bytes);
            // Inline asm is reported wherever it is (the gemm example's cp.async);
            // nothing else may fire on our own kernels.
            auto findings = scanSource(*bytes);
            const bool hasAsm = bytes->find("asm volatile") != std::string::npos;
            QCOMPARE(!findings.empty() && findings.front().rule == "inline-asm", hasAsm);
            std::erase_if(findings, [](const ScanFinding& f) { return f.rule == "inline-asm"; });
            QVERIFY2(findings.empty(), qPrintable(file + ": " + qs(scanText(findings, file.toStdString()))));
            ++scanned;
        }
    }
    QVERIFY(scanned >= 20);
    // Over the bound: one finding that says so.
    const auto big = scanSource(std::string(kMaxScanBytes + 1, ' '));
    QCOMPARE(big.size(), size_t(1));
    QCOMPARE(qs(big.front().rule), QString("not-scanned"));
}

QTEST_GUILESS_MAIN(TestCandidateAdd)
#include "tst_candidateadd.moc"
