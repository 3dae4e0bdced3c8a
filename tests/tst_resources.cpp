// Resource usage read from cubins (no GPU): small kernels with known numbers compiled by NVRTC at
// test time and cross-checked against the ptxas report of the same build, the sm_90+ shared-
// memory reserve, the ptxas report and PTX directive parsers, the ELF header's architecture,
// and damaged input that must come back as an error rather than a crash.
#include "engine/analysis/Resources.h"
#include "engine/compile/Compiler.h"
#include "engine/core/JsonReader.h"
#include "testutil.h"

#include <QCoreApplication>
#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include <cstddef>
#include <cstring>
#include <elf.h>
#include <map>
#include <random>

using namespace kf;

namespace {

const char* kSharedAndBarrier =
    "extern \"C\" __global__ void shared256(float* a) {\n"
    "  __shared__ float s[256];\n"
    "  s[threadIdx.x] = a[threadIdx.x];\n"
    "  __syncthreads();\n"
    "  a[threadIdx.x] = s[255 - threadIdx.x];\n"
    "}\n";

const char* kSpill =
    "extern \"C\" __global__ void spill(float* a, int n) {\n"
    "  float loc[64];\n"
    "  for (int i = 0; i < 64; ++i) loc[i] = a[i * n + threadIdx.x];\n"
    "  float acc = 0;\n"
    "  for (int j = 0; j < n; ++j)\n"
    "    for (int i = 0; i < 64; ++i) acc += loc[i] * loc[(i + j) & 63];\n"
    "  a[threadIdx.x] = acc;\n"
    "}\n";

// Several kernels with different resources in one module, for the per-architecture sweep.
const char* kMixed =
    "extern \"C\" __global__ void noshared(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2.f; }\n"
    "extern \"C\" __global__ void shared128(float* a) { __shared__ float s[32]; s[threadIdx.x % 32] = a[threadIdx.x]; __syncwarp(); a[threadIdx.x] = s[31 - threadIdx.x % 32]; }\n"
    "extern \"C\" __global__ void __launch_bounds__(256, 2) bounded(float* a) { a[threadIdx.x] += 1.f; }\n"
    "extern \"C\" __global__ void named(float* a) { asm volatile(\"bar.sync 3, 64;\"); a[0] = 1.f; }\n"
    "template <int N> __global__ void tiled(const double* x, double* y, int n) {\n"
    "  __shared__ double t[N]; t[threadIdx.x % N] = x[threadIdx.x]; __syncthreads(); y[threadIdx.x] = t[(threadIdx.x + 1) % N] * n; }\n"
    "template __global__ void tiled<64>(const double*, double*, int);\n"
    "extern \"C\" __global__ void local(float* a, int k) { float loc[256]; for (int i = 0; i < 256; ++i) loc[i] = a[i * k + threadIdx.x]; a[threadIdx.x] = loc[(k * threadIdx.x) & 255]; }\n";

/// What the ptxas report of one compile says about each entry, read independently of the
/// engine's parser so the two can check each other.
struct Reported {
    int registers = -1, barriers = 0, smem = 0, stack = -1, spillStores = -1, spillLoads = -1, cmem0 = -1;
};

std::map<std::string, Reported> parseReport(const std::string& log)
{
    static const QRegularExpression entryRe("Compiling entry function '([^']+)'");
    static const QRegularExpression propsRe("Function properties for (\\S+)");
    static const QRegularExpression stackRe("(\\d+) bytes stack frame, (\\d+) bytes spill stores, (\\d+) bytes spill loads");
    static const QRegularExpression usedRe("Used (\\d+) registers");
    static const QRegularExpression barRe("used (\\d+) barriers");
    static const QRegularExpression smemRe("(\\d+) bytes smem");
    static const QRegularExpression cmemRe("(\\d+) bytes cmem\\[0\\]");
    std::map<std::string, Reported> out;
    QString entry, props;
    for (const QString& line : qs(log).split('\n')) {
        if (auto m = entryRe.match(line); m.hasMatch()) {
            entry = props = m.captured(1);
            out[entry.toStdString()];
        } else if (auto m = propsRe.match(line); m.hasMatch()) {
            props = m.captured(1);
        } else if (auto m = stackRe.match(line); m.hasMatch()) {
            if (auto it = out.find(props.toStdString()); it != out.end()) {
                it->second.stack = m.captured(1).toInt();
                it->second.spillStores = m.captured(2).toInt();
                it->second.spillLoads = m.captured(3).toInt();
            }
        } else if (auto m = usedRe.match(line); m.hasMatch() && !entry.isEmpty()) {
            Reported& r = out[entry.toStdString()];
            r.registers = m.captured(1).toInt();
            if (auto b = barRe.match(line); b.hasMatch())
                r.barriers = b.captured(1).toInt();
            if (auto s = smemRe.match(line); s.hasMatch())
                r.smem = s.captured(1).toInt();
            if (auto c = cmemRe.match(line); c.hasMatch())
                r.cmem0 = c.captured(1).toInt();
        }
    }
    return out;
}

bool g_haveNvrtc = false;

Result<CompileResult> build(const std::string& source, const std::string& arch, int maxRegisters = 0)
{
    CompileRequest req;
    req.source = source;
    req.fileName = "resources.cu";
    req.options.arch = arch;
    req.options.maxRegisters = maxRegisters;
    req.wantSass = false;
    return compile(req);
}

/// The engine's reading of a fresh build: the cubin alone (before the report can patch
/// anything), so the ELF decoding itself is what gets checked.
struct Built {
    CompileResult compiled;
    std::vector<KernelResources> fromElf;
};

Built buildOrFail(const std::string& source, const std::string& arch, int maxRegisters = 0)
{
    auto r = build(source, arch, maxRegisters);
    if (!r)
        qFatal("compile failed: %s", r.error().message().c_str());
    if (!r->success)
        qFatal("kernel did not compile:\n%s", r->log.c_str());
    auto k = readCubinResources(r->cubin);
    if (!k)
        qFatal("cubin not readable: %s", k.error().message().c_str());
    return {std::move(r.value()), std::move(k.value())};
}

const KernelResources* findKernel(const std::vector<KernelResources>& ks, const std::string& name)
{
    for (const KernelResources& k : ks)
        if (k.name == name)
            return &k;
    return nullptr;
}

/// A 64-byte CUDA ELF header with the given flags, for the architecture decoding rows.
QByteArray cudaHeader(unsigned abiVersion, std::uint32_t flags)
{
    Elf64_Ehdr h{};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_ident[EI_OSABI] = abiVersion >= 8 ? 0x41 : 0x33;
    h.e_ident[EI_ABIVERSION] = static_cast<unsigned char>(abiVersion);
    h.e_type = ET_EXEC;
    h.e_machine = EM_CUDA;
    h.e_version = EV_CURRENT;
    h.e_flags = flags;
    h.e_ehsize = sizeof(Elf64_Ehdr);
    h.e_shentsize = sizeof(Elf64_Shdr);
    return QByteArray(reinterpret_cast<const char*>(&h), sizeof h);
}

template <class T>
QByteArray patched(QByteArray bytes, size_t offset, T value)
{
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    return bytes;
}

std::string_view view(const QByteArray& b) { return {b.constData(), static_cast<size_t>(b.size())}; }

} // namespace

class TestResources : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void knownKernels_data();
    void knownKernels();
    void everyKernelMatchesReport_data();
    void everyKernelMatchesReport();
    void sharedReserve_data();
    void sharedReserve();
    void ptxasReport_data();
    void ptxasReport();
    void ptxDirectives();
    void architectureFromHeader_data();
    void architectureFromHeader();
    void malformed_data();
    void malformed();
    void everyTruncationIsAnError();
    void corruptBytesNeverCrash();
    void demangle_data();
    void demangle();
    void jsonRoundTrip();
    void jsonRejectsBadDocuments_data();
    void jsonRejectsBadDocuments();

private:
    QByteArray m_cubin; // a real sm_90 cubin for the damage tests
};

void TestResources::initTestCase()
{
    auto v = nvrtcVersion();
    g_haveNvrtc = v.ok();
    if (!g_haveNvrtc) {
        qWarning("libnvrtc is not available (%s): rows that compile kernels are skipped", v.error().why.c_str());
        return;
    }
    Built b = buildOrFail(kMixed, "sm_90");
    m_cubin = QByteArray(b.compiled.cubin.data(), static_cast<qsizetype>(b.compiled.cubin.size()));
}

void TestResources::knownKernels_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("maxRegisters");
    QTest::addColumn<QString>("kernel");
    // Expected values; -1 = not checked by this row.
    QTest::addColumn<int>("staticShared");
    QTest::addColumn<int>("reservedShared");
    QTest::addColumn<int>("barriers");
    QTest::addColumn<int>("paramBytes");
    QTest::addColumn<int>("maxThreads");
    QTest::addColumn<int>("minBlocks");
    QTest::addColumn<int>("maxRegisterCount");
    QTest::addColumn<bool>("spills");

    QTest::newRow("static float[256] on sm_90") << kSharedAndBarrier << "sm_90" << 0 << "shared256"
        << 1024 << 1024 << 1 << 8 << 0 << 0 << 0 << false;
    QTest::newRow("static float[256] on sm_80") << kSharedAndBarrier << "sm_80" << 0 << "shared256"
        << 1024 << 0 << 1 << 8 << 0 << 0 << 0 << false;
    QTest::newRow("static float[256] on sm_120") << kSharedAndBarrier << "sm_120" << 0 << "shared256"
        << 1024 << 1024 << 1 << 8 << 0 << 0 << 0 << false;
    QTest::newRow("spills under -maxrregcount=32") << kSpill << "sm_90" << 32 << "spill"
        << 0 << 0 << 0 << 12 << 0 << 0 << 32 << true;
    QTest::newRow("__launch_bounds__(128, 4)")
        << "extern \"C\" __global__ void __launch_bounds__(128, 4) lb(float* a) { a[threadIdx.x] += 1.f; }\n"
        << "sm_90" << 0 << "lb" << 0 << 0 << 0 << 8 << 128 << 4 << 128 << false;
    QTest::newRow("__launch_bounds__(1024) caps registers at 64")
        << "extern \"C\" __global__ void __launch_bounds__(1024) lb(float* a) { a[threadIdx.x] += 1.f; }\n"
        << "sm_86" << 0 << "lb" << 0 << 0 << 0 << 8 << 1024 << 0 << 64 << false;
    QTest::newRow("__maxnreg__(40)")
        << "extern \"C\" __global__ void __maxnreg__(40) mr(float* a) { a[threadIdx.x] += 1.f; }\n"
        << "sm_90" << 0 << "mr" << 0 << 0 << 0 << 8 << 0 << 0 << 40 << false;
    QTest::newRow("named barrier 3 counts 4")
        << "extern \"C\" __global__ void named(float* a) { asm volatile(\"bar.sync 3, 64;\"); a[0] = 1.f; }\n"
        << "sm_90" << 0 << "named" << 0 << 0 << 4 << 8 << 0 << 0 << 0 << false;
    QTest::newRow("400-byte struct parameter")
        << "struct Big { float v[100]; };\n"
           "extern \"C\" __global__ void big(Big b, float* out) { out[threadIdx.x] = b.v[threadIdx.x % 100]; }\n"
        << "sm_90" << 0 << "big" << 0 << 0 << 0 << 408 << 0 << 0 << 0 << false;
    QTest::newRow("template with mixed parameters")
        << "template <int N> __global__ void t(const double* x, double* y, char c, double s) { y[threadIdx.x % N] = x[threadIdx.x] * s + c; }\n"
           "template __global__ void t<64>(const double*, double*, char, double);\n"
        << "sm_89" << 0 << "_Z1tILi64EEvPKdPdcd" << 0 << 0 << 0 << 32 << 0 << 0 << 0 << false;
    QTest::newRow("dynamic shared only on sm_90")
        << "extern \"C\" __global__ void dyn(float* a) { extern __shared__ float d[]; d[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = d[0]; }\n"
        << "sm_90" << 0 << "dyn" << 0 << 1024 << 1 << 8 << 0 << 0 << 0 << false;
    QTest::newRow("no shared memory on sm_100")
        << "extern \"C\" __global__ void plain(float* a) { a[threadIdx.x] *= 2.f; }\n"
        << "sm_100" << 0 << "plain" << 0 << 0 << 0 << 8 << 0 << 0 << 0 << false;
    QTest::newRow("static 3 bytes on sm_75")
        << "extern \"C\" __global__ void c3(char* a) { __shared__ char s[3]; s[threadIdx.x % 3] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = s[(threadIdx.x + 1) % 3]; }\n"
        << "sm_75" << 0 << "c3" << 3 << 0 << 1 << 8 << 0 << 0 << 0 << false;
}

void TestResources::knownKernels()
{
    if (!g_haveNvrtc)
        QSKIP("libnvrtc is not available: cannot compile the kernel");
    QFETCH(QString, source);
    QFETCH(QString, arch);
    QFETCH(int, maxRegisters);
    QFETCH(QString, kernel);
    QFETCH(int, staticShared);
    QFETCH(int, reservedShared);
    QFETCH(int, barriers);
    QFETCH(int, paramBytes);
    QFETCH(int, maxThreads);
    QFETCH(int, minBlocks);
    QFETCH(int, maxRegisterCount);
    QFETCH(bool, spills);

    Built b = buildOrFail(source.toStdString(), arch.toStdString(), maxRegisters);
    std::vector<KernelResources> ks = b.fromElf;
    applyPtxasReport(b.compiled.log, ks);
    applyPtxDirectives(b.compiled.ptx, ks);
    const KernelResources* k = findKernel(ks, kernel.toStdString());
    QVERIFY2(k, "kernel not found in the cubin");
    QCOMPARE(ks.size(), size_t(1));

    QCOMPARE(k->staticSharedBytes, staticShared);
    QCOMPARE(k->reservedSharedBytes, reservedShared);
    QCOMPARE(k->barriers, barriers);
    QCOMPARE(k->paramBytes, paramBytes);
    QCOMPARE(k->maxThreadsPerBlock, maxThreads);
    QCOMPARE(k->minBlocksPerSm, minBlocks);
    QCOMPARE(k->maxRegisterCount, maxRegisterCount);
    QVERIFY(k->registers > 0);
    if (maxRegisterCount > 0)
        QVERIFY(k->registers <= maxRegisterCount);
    QVERIFY(k->constBank0Bytes >= k->paramBytes);
    QCOMPARE(k->spillStoreBytes > 0, spills);
    QCOMPARE(k->spillLoadBytes > 0, spills);
    if (spills)
        QVERIFY(k->localBytes >= k->spillStoreBytes);

    // The ELF alone already agrees with ptxas on everything the report states.
    const Reported r = parseReport(b.compiled.log).at(kernel.toStdString());
    const KernelResources* e = findKernel(b.fromElf, kernel.toStdString());
    QCOMPARE(e->registers, r.registers);
    QCOMPARE(e->barriers, r.barriers);
    QCOMPARE(e->staticSharedBytes, r.smem);
    QCOMPARE(e->localBytes, r.stack);
    QCOMPARE(k->spillStoreBytes, r.spillStores);
    QCOMPARE(k->spillLoadBytes, r.spillLoads);
    if (r.cmem0 >= 0)
        QCOMPARE(e->constBank0Bytes, r.cmem0);
    if (kernel.startsWith("_Z"))
        QCOMPARE(qs(k->demangled), QStringLiteral("void t<64>(double const*, double*, char, double)"));
}

void TestResources::everyKernelMatchesReport_data()
{
    QTest::addColumn<QString>("arch");
    for (const char* a : {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120"})
        QTest::newRow(a) << a;
}

// Every entry of a mixed module, on every architecture we support, read from the ELF alone
// matches the ptxas report of the same build: no kernel missing, none invented.
void TestResources::everyKernelMatchesReport()
{
    if (!g_haveNvrtc)
        QSKIP("libnvrtc is not available: cannot compile the kernels");
    QFETCH(QString, arch);
    Built b = buildOrFail(kMixed, arch.toStdString());
    const auto report = parseReport(b.compiled.log);
    QCOMPARE(b.fromElf.size(), report.size());
    QCOMPARE(b.fromElf.size(), size_t(6));
    for (const KernelResources& k : b.fromElf) {
        auto it = report.find(k.name);
        QVERIFY2(it != report.end(), k.name.c_str());
        const Reported& r = it->second;
        QVERIFY2(k.registers == r.registers, k.name.c_str());
        QVERIFY2(k.barriers == r.barriers, k.name.c_str());
        QVERIFY2(k.staticSharedBytes == r.smem, k.name.c_str());
        QVERIFY2(k.localBytes == r.stack, k.name.c_str());
        if (r.cmem0 >= 0)
            QVERIFY2(k.constBank0Bytes == r.cmem0, k.name.c_str());
    }
    const KernelResources* local = findKernel(b.fromElf, "local");
    QVERIFY(local && local->localBytes >= 1024); // float[256] indexed at run time lives in local memory
    const KernelResources* bounded = findKernel(b.fromElf, "bounded");
    QVERIFY(bounded && bounded->maxThreadsPerBlock == 256 && bounded->maxRegisterCount == 128);

    auto sm = cubinArchitecture(b.compiled.cubin);
    KF_VERIFY_OK(sm);
    QCOMPARE(QString("sm_%1").arg(*sm), arch);
}

void TestResources::sharedReserve_data()
{
    const char* withDynamic =
        "extern \"C\" __global__ void noshared(float* a) { a[threadIdx.x] *= 2.f; }\n"
        "extern \"C\" __global__ void dyn(float* a) { extern __shared__ float d[]; d[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = d[0]; }\n";
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("staticShared");
    QTest::addColumn<int>("reservedShared");
    // A kernel has a .nv.shared section when it declares static shared memory, or when the
    // module declares extern (dynamic) shared memory, which every kernel could then reach. From
    // sm_90 on that section starts with the 1 KiB reserve; before sm_90 it holds user bytes only.
    QTest::newRow("sm_80 128 bytes") << kMixed << "sm_80" << "shared128" << 128 << 0;
    QTest::newRow("sm_80 none") << kMixed << "sm_80" << "noshared" << 0 << 0;
    QTest::newRow("sm_90 128 bytes") << kMixed << "sm_90" << "shared128" << 128 << 1024;
    QTest::newRow("sm_90 none beside static shared") << kMixed << "sm_90" << "noshared" << 0 << 0;
    QTest::newRow("sm_90 template 512 bytes") << kMixed << "sm_90" << "_Z5tiledILi64EEvPKdPdi" << 512 << 1024;
    QTest::newRow("sm_100 128 bytes") << kMixed << "sm_100" << "shared128" << 128 << 1024;
    QTest::newRow("sm_120 128 bytes") << kMixed << "sm_120" << "shared128" << 128 << 1024;
    QTest::newRow("sm_80 none beside dynamic") << withDynamic << "sm_80" << "noshared" << 0 << 0;
    QTest::newRow("sm_90 none beside dynamic") << withDynamic << "sm_90" << "noshared" << 0 << 1024;
    QTest::newRow("sm_90 dynamic only") << withDynamic << "sm_90" << "dyn" << 0 << 1024;
    QTest::newRow("sm_120 none beside dynamic") << withDynamic << "sm_120" << "noshared" << 0 << 1024;
}

void TestResources::sharedReserve()
{
    if (!g_haveNvrtc)
        QSKIP("libnvrtc is not available: cannot compile the kernels");
    QFETCH(QString, source);
    QFETCH(QString, arch);
    QFETCH(QString, kernel);
    QFETCH(int, staticShared);
    QFETCH(int, reservedShared);
    Built b = buildOrFail(source.toStdString(), arch.toStdString());
    const KernelResources* k = findKernel(b.fromElf, kernel.toStdString());
    QVERIFY(k);
    QCOMPARE(k->staticSharedBytes, staticShared);
    QCOMPARE(k->reservedSharedBytes, reservedShared);
    // The report agrees and leaves the split alone.
    std::vector<KernelResources> withReport = b.fromElf;
    applyPtxasReport(b.compiled.log, withReport);
    k = findKernel(withReport, kernel.toStdString());
    QCOMPARE(k->staticSharedBytes, staticShared);
    QCOMPARE(k->reservedSharedBytes, reservedShared);
}

void TestResources::ptxasReport_data()
{
    QTest::addColumn<QString>("log");
    QTest::addColumn<int>("registers");
    QTest::addColumn<int>("spillStores");
    QTest::addColumn<int>("spillLoads");
    QTest::addColumn<int>("local");
    QTest::addColumn<int>("staticShared");
    QTest::addColumn<int>("reservedShared");
    QTest::addColumn<int>("barriers");

    // The kernel under test starts as a cubin would leave it: 1536 bytes of sm_90 shared section
    // split as 512 + 1024, no stack recorded, registers unknown.
    QTest::newRow("NVRTC log")
        << "ptxas info    : 0 bytes gmem\n"
           "ptxas info    : Compiling entry function '_Z1kILi128EEvPfi' for 'sm_90'\n"
           "ptxas info    : Function properties for _Z1kILi128EEvPfi\n"
           "ptxas         .     256 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 512 bytes smem\n"
           "ptxas info    : Compile time = 1.0 ms\n"
        << 32 << 8 << 12 << 256 << 512 << 1024 << 1;
    QTest::newRow("nvcc log with CRLF")
        << "ptxas info    : Compiling entry function '_Z1kILi128EEvPfi' for 'sm_90'\r\n"
           "ptxas info    : Function properties for _Z1kILi128EEvPfi\r\n"
           "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\n"
           "ptxas info    : Used 10 registers, used 0 barriers, 512 bytes smem\r\n"
        << 10 << 0 << 0 << 0 << 512 << 1024 << 0;
    // A device function's frame after the kernel's must not land on the kernel.
    QTest::newRow("device function properties ignored")
        << "ptxas info    : Compiling entry function '_Z1kILi128EEvPfi' for 'sm_90'\n"
           "ptxas info    : Function properties for _Z1kILi128EEvPfi\n"
           "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 24 registers, used 0 barriers, 512 bytes smem\n"
           "ptxas info    : Function properties for _Z3reciPi\n"
           "ptxas         .     72 bytes stack frame, 28 bytes spill stores, 28 bytes spill loads\n"
        << 24 << 0 << 0 << 0 << 512 << 1024 << 0;
    // Without "smem" ptxas means none: the whole section is then the reserve.
    QTest::newRow("no smem reported")
        << "ptxas info    : Compiling entry function '_Z1kILi128EEvPfi' for 'sm_90'\n"
           "ptxas info    : Function properties for _Z1kILi128EEvPfi\n"
           "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 8 registers, used 0 barriers\n"
        << 8 << 0 << 0 << 0 << 0 << 1536 << 0;
    QTest::newRow("older ptxas with cmem")
        << "ptxas info    : Compiling entry function '_Z1kILi128EEvPfi' for 'sm_80'\n"
           "ptxas info    : Function properties for _Z1kILi128EEvPfi\n"
           "    16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
           "ptxas info    : Used 255 registers, 1536 bytes smem, 360 bytes cmem[0]\n"
        << 255 << 4 << 4 << 16 << 1536 << 0 << 0;
    QTest::newRow("another kernel only")
        << "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
           "ptxas info    : Function properties for other\n"
           "ptxas         .     64 bytes stack frame, 64 bytes spill stores, 64 bytes spill loads\n"
           "ptxas info    : Used 99 registers, used 2 barriers, 4096 bytes smem\n"
        << 0 << -1 << -1 << 0 << 512 << 1024 << 0;
    QTest::newRow("empty log") << "" << 0 << -1 << -1 << 0 << 512 << 1024 << 0;
}

void TestResources::ptxasReport()
{
    QFETCH(QString, log);
    QFETCH(int, registers);
    QFETCH(int, spillStores);
    QFETCH(int, spillLoads);
    QFETCH(int, local);
    QFETCH(int, staticShared);
    QFETCH(int, reservedShared);
    QFETCH(int, barriers);
    KernelResources k;
    k.name = "_Z1kILi128EEvPfi";
    k.staticSharedBytes = 512;
    k.reservedSharedBytes = 1024;
    std::vector<KernelResources> ks{k};
    applyPtxasReport(log.toStdString(), ks);
    QCOMPARE(ks[0].registers, registers);
    QCOMPARE(ks[0].spillStoreBytes, spillStores);
    QCOMPARE(ks[0].spillLoadBytes, spillLoads);
    QCOMPARE(ks[0].localBytes, local);
    QCOMPARE(ks[0].staticSharedBytes, staticShared);
    QCOMPARE(ks[0].reservedSharedBytes, reservedShared);
    QCOMPARE(ks[0].barriers, barriers);
    // Applying the same report twice changes nothing.
    auto again = ks;
    applyPtxasReport(log.toStdString(), again);
    QVERIFY(toJson(again[0]) == toJson(ks[0]));
}

void TestResources::ptxDirectives()
{
    const std::string ptx =
        "// .globl\tlb\n"
        ".visible .entry lb(\n\t.param .u64 lb_param_0\n)\n.maxntid 128, 1, 1\n.minnctapersm 4\n{\n\tret;\n}\n"
        ".visible .entry cl(\n\t.param .u64 cl_param_0\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n.maxclusterrank 4\n{\n}\n"
        ".visible .entry mr(\n\t.param .u64 mr_param_0\n)\n.maxnreg 40\n{\n}\n"
        ".visible .entry req()\n.reqntid 32, 4 // a comment\n{\n}\n"
        ".visible .entry plain(\n)\n{\n\t// .minnctapersm 9 in a comment of the body\n}\n";
    std::vector<KernelResources> ks(5);
    const char* names[] = {"lb", "cl", "mr", "req", "plain"};
    for (int i = 0; i < 5; ++i)
        ks[i].name = names[i];
    ks[2].maxRegisterCount = 40; // as read from the cubin: left alone
    applyPtxDirectives(ptx, ks);
    QCOMPARE(ks[0].maxThreadsPerBlock, 128);
    QCOMPARE(ks[0].minBlocksPerSm, 4);
    QCOMPARE(ks[1].maxThreadsPerBlock, 256);
    QCOMPARE(ks[1].minBlocksPerSm, 2);
    QCOMPARE(ks[2].maxRegisterCount, 40);
    QCOMPARE(ks[2].minBlocksPerSm, 0);
    QCOMPARE(ks[3].maxThreadsPerBlock, 128);
    QCOMPARE(ks[4].maxThreadsPerBlock, 0);
    QCOMPARE(ks[4].minBlocksPerSm, 0);
    // Truncated PTX stops quietly.
    applyPtxDirectives(".visible .entry lb(\n\t.param .u64", ks);
    applyPtxDirectives(".entry", ks);
}

void TestResources::architectureFromHeader_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<int>("sm"); // 0: an error is expected
    // CUDA <= 12 (ELF ABI 7): SM in bits 0..7, virtual SM in bits 16..23.
    QTest::newRow("CUDA 12 sm_90") << cudaHeader(7, 0x5a055a) << 90;
    QTest::newRow("CUDA 12 sm_75") << cudaHeader(7, 0x4b054b) << 75;
    // CUDA 13 (ELF ABI 8): SM in bits 8..15.
    QTest::newRow("CUDA 13 sm_75") << cudaHeader(8, 0x6004b04) << 75;
    QTest::newRow("CUDA 13 sm_90") << cudaHeader(8, 0x6005a04) << 90;
    QTest::newRow("CUDA 13 sm_100") << cudaHeader(8, 0x6006402) << 100;
    QTest::newRow("CUDA 13 sm_120") << cudaHeader(8, 0x6007802) << 120;
    QTest::newRow("no SM in the flags") << cudaHeader(8, 0) << 0;
}

void TestResources::architectureFromHeader()
{
    QFETCH(QByteArray, header);
    QFETCH(int, sm);
    auto r = cubinArchitecture(view(header));
    if (sm == 0) {
        QVERIFY(!r.ok());
        return;
    }
    KF_VERIFY_OK(r);
    QCOMPARE(*r, sm);
    // A header without sections is not a readable cubin.
    QVERIFY(!readCubinResources(view(header)).ok());
}

void TestResources::malformed_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("because");

    QTest::newRow("empty") << QByteArray() << "empty";
    QTest::newRow("text, not ELF") << QByteArray("__global__ void k() {}\n") << "not an ELF file";
    QTest::newRow("ELF magic only") << QByteArray("\x7f" "ELF", 4) << "truncated";
    QTest::newRow("fatbinary") << QByteArray("\x50\xed\x55\xba\x01\x00\x10\x00", 8) << "fatbinary";
    {
        QFile self(QCoreApplication::applicationFilePath());
        QVERIFY(self.open(QIODevice::ReadOnly));
        QTest::newRow("ELF of the host machine") << self.read(4096) << "not a CUDA cubin";
    }
    QByteArray header = cudaHeader(8, 0x6005a04);
    QTest::newRow("32-bit ELF") << patched<unsigned char>(header, EI_CLASS, ELFCLASS32) << "32-bit";
    QTest::newRow("big-endian ELF") << patched<unsigned char>(header, EI_DATA, ELFDATA2MSB) << "big-endian";
    QTest::newRow("header only") << header << "no section table";
    QTest::newRow("header cut short") << header.left(40) << "truncated";

    if (m_cubin.isEmpty())
        return; // the rows below damage a real cubin; without NVRTC there is none
    const QByteArray& c = m_cubin;
    QTest::newRow("cubin cut in half") << c.left(c.size() / 2) << "truncated";
    QTest::newRow("cubin missing its last byte") << c.left(c.size() - 1) << "truncated";
    QTest::newRow("section table offset past the end")
        << patched<Elf64_Off>(c, offsetof(Elf64_Ehdr, e_shoff), Elf64_Off(c.size()) + 64) << "truncated";
    QTest::newRow("section table offset near 2^64")
        << patched<Elf64_Off>(c, offsetof(Elf64_Ehdr, e_shoff), ~Elf64_Off(0) - 8) << "truncated";
    QTest::newRow("too many sections")
        << patched<Elf64_Half>(c, offsetof(Elf64_Ehdr, e_shnum), 0xfff0) << "truncated";
    QTest::newRow("name table index out of range")
        << patched<Elf64_Half>(c, offsetof(Elf64_Ehdr, e_shstrndx), 0xfff0) << "out of range";
    QTest::newRow("odd section header size")
        << patched<Elf64_Half>(c, offsetof(Elf64_Ehdr, e_shentsize), 40) << "section header size";
    QTest::newRow("machine changed to x86-64")
        << patched<Elf64_Half>(c, offsetof(Elf64_Ehdr, e_machine), EM_X86_64) << "x86-64";
    {
        // Point section 1's data far past the end of the file.
        Elf64_Ehdr h;
        std::memcpy(&h, c.constData(), sizeof h);
        const size_t at = h.e_shoff + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_offset);
        QTest::newRow("section data past the end") << patched<Elf64_Off>(c, at, Elf64_Off(1) << 40) << "extends past the end";
        const size_t size = h.e_shoff + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_size);
        QTest::newRow("section size wraps around") << patched<Elf64_Xword>(c, size, ~Elf64_Xword(0)) << "extends past the end";
    }
}

void TestResources::malformed()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, because);
    auto r = readCubinResources(view(bytes));
    QVERIFY2(!r.ok(), "damaged input was read as a cubin");
    const QString message = qs(r.error().message());
    QVERIFY2(message.contains(because), qPrintable(message));
    QVERIFY(!r.error().hint.empty());
}

// Every prefix of a real cubin is an error, never a crash or a partial answer.
void TestResources::everyTruncationIsAnError()
{
    if (m_cubin.isEmpty())
        QSKIP("libnvrtc is not available: no cubin to truncate");
    QVERIFY(readCubinResources(view(m_cubin)).ok());
    for (qsizetype n = 0; n < m_cubin.size(); ++n) {
        auto r = readCubinResources(view(m_cubin).substr(0, static_cast<size_t>(n)));
        if (r.ok())
            QFAIL(qPrintable(QString("a cubin cut to %1 of %2 bytes was accepted").arg(n).arg(m_cubin.size())));
    }
}

// Random damage anywhere must give a value or an Error; run under the dev-asan preset this
// also proves no read leaves the buffer.
void TestResources::corruptBytesNeverCrash()
{
    if (m_cubin.isEmpty())
        QSKIP("libnvrtc is not available: no cubin to damage");
    std::mt19937 rng(20240611);
    int errors = 0;
    for (int i = 0; i < 3000; ++i) {
        QByteArray c = m_cubin;
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int f = 0; f < flips; ++f) {
            // Half the damage goes to the headers and the section table, where offsets live.
            const bool structural = rng() % 2;
            Elf64_Ehdr h;
            std::memcpy(&h, m_cubin.constData(), sizeof h);
            const size_t tableSize = size_t(h.e_shnum) * sizeof(Elf64_Shdr);
            const size_t pos = structural ? (rng() % 2 ? rng() % sizeof h : h.e_shoff + rng() % tableSize)
                                          : rng() % static_cast<size_t>(c.size());
            c[static_cast<qsizetype>(pos)] = static_cast<char>(rng());
        }
        auto r = readCubinResources(view(c));
        if (!r.ok())
            ++errors;
        else
            for (const KernelResources& k : *r)
                QVERIFY(k.staticSharedBytes >= 0 && k.reservedSharedBytes >= 0);
    }
    QVERIFY(errors > 0);
}

void TestResources::demangle_data()
{
    QTest::addColumn<QString>("mangled");
    QTest::addColumn<QString>("human");
    QTest::newRow("template") << "_Z1fILi256EEvPf" << "void f<256>(float*)";
    QTest::newRow("const pointers") << "_Z5scaleILi256EEvPKfPfi" << "void scale<256>(float const*, float*, int)";
    QTest::newRow("namespace") << "_ZN2ns6kernelEPdi" << "ns::kernel(double*, int)";
    QTest::newRow("extern C") << "softmax_rows" << "softmax_rows";
    QTest::newRow("broken mangling") << "_Z1fILi256" << "_Z1fILi256";
    QTest::newRow("empty") << "" << "";
}

void TestResources::demangle()
{
    QFETCH(QString, mangled);
    QFETCH(QString, human);
    QCOMPARE(qs(kf::demangle(mangled.toStdString())), human);
}

void TestResources::jsonRoundTrip()
{
    KernelResources k;
    k.name = "_Z1fILi256EEvPf";
    k.demangled = "void f<256>(float*)";
    k.registers = 40;
    k.staticSharedBytes = 512;
    k.reservedSharedBytes = 1024;
    k.localBytes = 624;
    k.spillStoreBytes = 376;
    k.spillLoadBytes = 516;
    k.constBank0Bytes = 540;
    k.paramBytes = 12;
    k.barriers = 1;
    k.maxThreadsPerBlock = 128;
    k.minBlocksPerSm = 4;
    k.maxRegisterCount = 128;
    const nlohmann::json j = toJson(k);
    for (const char* key : {"name", "demangled", "registers", "static_shared_bytes", "reserved_shared_bytes", "local_bytes",
                            "spill_store_bytes", "spill_load_bytes", "const_bank0_bytes", "param_bytes", "barriers",
                            "max_threads_per_block", "min_blocks_per_sm", "max_register_count"})
        QVERIFY2(j.contains(key), key);
    QCOMPARE(j.size(), size_t(14));
    QCOMPARE(j.at("static_shared_bytes").get<int>(), 512);
    const KernelResources back = kernelResourcesFromJson(j);
    QVERIFY(toJson(back) == j);

    // Unknown spill numbers survive as -1; a minimal document takes the defaults.
    const KernelResources minimal = kernelResourcesFromJson(nlohmann::json{{"name", "_Z1fILi256EEvPf"}});
    QCOMPARE(minimal.spillStoreBytes, -1);
    QCOMPARE(qs(minimal.demangled), QStringLiteral("void f<256>(float*)"));
}

void TestResources::jsonRejectsBadDocuments_data()
{
    QTest::addColumn<QString>("document");
    QTest::addColumn<QString>("pointer");
    QTest::newRow("not an object") << "[1, 2]" << "/";
    QTest::newRow("missing name") << "{\"registers\": 3}" << "/";
    QTest::newRow("registers as text") << "{\"name\": \"k\", \"registers\": \"many\"}" << "/registers";
    QTest::newRow("negative shared") << "{\"name\": \"k\", \"static_shared_bytes\": -4}" << "/static_shared_bytes";
    QTest::newRow("spill below -1") << "{\"name\": \"k\", \"spill_store_bytes\": -2}" << "/spill_store_bytes";
    QTest::newRow("too large") << "{\"name\": \"k\", \"local_bytes\": 4294967296}" << "/local_bytes";
    QTest::newRow("unknown key") << "{\"name\": \"k\", \"regs\": 3}" << "/regs";
}

void TestResources::jsonRejectsBadDocuments()
{
    QFETCH(QString, document);
    QFETCH(QString, pointer);
    const auto j = nlohmann::json::parse(document.toStdString());
    try {
        (void)kernelResourcesFromJson(j);
        QFAIL("a bad document was accepted");
    } catch (const json::SchemaError& e) {
        QCOMPARE(qs(e.pointer), pointer);
        QVERIFY(!e.message.empty());
    }
}

QTEST_GUILESS_MAIN(TestResources)
#include "tst_resources.moc"
