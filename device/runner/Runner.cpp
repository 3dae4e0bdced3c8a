#include "device/runner/Runner.h"
#include "engine/protocol/Verdict.h"

#include "device/runner/Sanitize.h"
#include "device/runner/SanitizerTool.h"

#include "device/CudaDriver.h"
#include "device/GpuMemory.h"
#include "device/runner/Bencher.h"
#include "device/runner/Profiler.h"
#include "device/runner/RunPlan.h"
#include "device/runner/TorchBridge.h"
#include "device/runner/Verifier.h"
#include "engine/core/Files.h"
#include "engine/core/TempFolder.h"
#include "engine/protocol/FileTransfer.h"
#include "engine/protocol/Protocol.h"
#include "engine/protocol/Signature.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <unistd.h>

namespace kf::device {

namespace {

bool envFlag(const char* name)
{
    const char* v = std::getenv(name);
    return v && std::strcmp(v, "1") == 0;
}

// device_error is shown on one line (status bars, `kforge env`): fold the loader's list.
std::string oneLine(std::string s)
{
    for (size_t p; (p = s.find(":\n  ")) != std::string::npos;)
        s.replace(p, 4, ": ");
    for (size_t p; (p = s.find("\n  ")) != std::string::npos;)
        s.replace(p, 3, "; ");
    for (char& c : s)
        if (c == '\n')
            c = ' ';
    // dlerror repeats the name it was given: "libcuda.so.1: libcuda.so.1: cannot open ..."
    return std::regex_replace(s, std::regex(R"(([^\s:;]+): \1: )"), "$1: ");
}

std::string cuFailure(CUresult r, const char* call)
{
    return std::string(call) + " failed with " + cuResultName(r) + " (" + cuResultString(r) + ")";
}

} // namespace

Runner::Runner(Channel& channel) : m_channel(channel) {}

void Runner::start()
{
    m_testHooks = envFlag("KF_RUNNER_TEST_HOOKS");
    m_torchVersion = TorchBridge::torchVersion();
    // The driver first, and the primary context current before LibTorch touches CUDA, so the
    // runtime adopts our context instead of racing us to create state.
    m_gpu = bringUpGpu();
    startTorch();
    m_channel.send(hello().toJson());
}

std::optional<GpuContext> Runner::bringUpGpu()
{
    if (envFlag("KF_RUNNER_FORCE_CPU")) {
        m_deviceError = "no CUDA device: CPU mode forced by KF_RUNNER_FORCE_CPU=1";
        return std::nullopt;
    }
    const auto& driver = CudaDriver::get();
    if (!driver) {
        m_deviceError = "no CUDA driver: " + oneLine(driver.error().why);
        return std::nullopt;
    }
    if (const CUresult r = KF_CU(cuInit, 0); r != CUDA_SUCCESS) {
        m_deviceError = r == CUDA_ERROR_NO_DEVICE ? "no CUDA device" : "no CUDA driver: " + cuFailure(r, "cuInit");
        return std::nullopt;
    }
    (void)KF_CU(cuDriverGetVersion, &m_driverApi);
    int count = 0;
    if (const CUresult r = KF_CU(cuDeviceGetCount, &count); r != CUDA_SUCCESS || count < 1) {
        m_deviceError = r == CUDA_SUCCESS ? "no CUDA device" : "no CUDA device: " + cuFailure(r, "cuDeviceGetCount");
        return std::nullopt;
    }
    m_devices = listVisibleDevices();
    // Device 0 of what CUDA_VISIBLE_DEVICES exposes: LibTorch's default device too.
    GpuContext gpu;
    if (const CUresult r = KF_CU(cuDeviceGet, &gpu.device, 0); r != CUDA_SUCCESS) {
        m_deviceError = "no CUDA device: " + cuFailure(r, "cuDeviceGet");
        return std::nullopt;
    }
    auto info = queryDevice(gpu.device, 0);
    if (!info) {
        m_deviceError = "no CUDA device: " + info.error().why;
        return std::nullopt;
    }
    gpu.info = std::move(info.value());
    auto ctx = PrimaryContext::retain(gpu.device);
    if (!ctx) {
        // A full GPU is not a missing one: say so, with what NVML says is free.
        m_deviceErrorKind = ctx.error().kind;
        m_deviceError = ctx.error().kind == kGpuOutOfMemory ? outOfMemorySentence(memoryUseFromNvml(gpu.device))
                                                             : "no CUDA device: " + ctx.error().why;
        return std::nullopt;
    }
    gpu.context = std::move(ctx.value());
    return gpu;
}

void Runner::startTorch()
{
    if (m_gpu) {
        auto torch = TorchBridge::init(true);
        Result<void> current = torch ? m_gpu->context.makeCurrent() : Result<void>(torch.error());
        if (!current) {
            m_deviceErrorKind = current.error().kind;
            m_deviceError = current.error().kind == kGpuOutOfMemory
                                ? outOfMemorySentence(memoryUse(), " (LibTorch could not start on it)")
                                : "LibTorch cannot use the GPU: " + current.error().why;
            m_gpu.reset();
        }
    }
    if (m_gpu) {
        auto poison = SharedMemoryPoison::load(m_gpu->info);
        if (poison)
            m_gpu->poison = std::move(poison.value());
        else
            m_gpu->poisonError = poison.error().message();
    }
    if (!m_gpu)
        if (auto r = TorchBridge::init(false); !r)
            std::fprintf(stderr, "kforge-runner: LibTorch did not initialise in CPU mode: %s\n", r.error().message().c_str());
}

protocol::Hello Runner::hello() const
{
    protocol::Hello hello;
    if (m_gpu) {
        hello.device = m_gpu->info.summary();
    } else {
        hello.deviceError = m_deviceError;
        hello.deviceErrorKind = m_deviceErrorKind;
    }
    hello.features = runnerFeatures();
    hello.torch = m_torchVersion;
    hello.cudaDriverApi = m_driverApi;
    hello.driver = m_gpu ? m_gpu->info.driverVersion : kernelModuleVersion();
    // Where it runs (protocol 3): a pool tells GPUs apart by host and UUID, reports say where they ran.
    hello.host = hostName();
    hello.visibleDevices = visibleDevices();
    hello.runnerBuild = KF_VERSION;
    if (auto key = protocol::loadSigningKey(false))
        hello.signingKeyId = key->id;
    hello.sanitizer = sanitizerTool();
    hello.devices = m_devices;
    return hello;
}

int Runner::serve(std::istream& in)
{
    std::string line;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        auto request = protocol::parseLine(line, protocol::From::Client);
        if (!request) {
            // Answer the request it was, when its id can be read (a version mismatch, a bad type).
            std::int64_t id = 0;
            if (line.size() <= protocol::kMaxLineBytes) {
                const auto j = nlohmann::json::parse(line, nullptr, false);
                if (j.is_object())
                    if (auto it = j.find("id"); it != j.end() && it->is_number_integer())
                        id = it->get<std::int64_t>();
            }
            m_channel.error(id, request.error(), false);
            continue;
        }
        if (auto exitStatus = handle(request.value()))
            return *exitStatus;
    }
    return 0; // end of input: the supervisor went away or closed our stdin
}

std::optional<int> Runner::handle(const nlohmann::json& request)
{
    const std::string type = request["type"].get<std::string>();
    std::int64_t id = 0;
    if (auto it = request.find("id"); it != request.end() && it->is_number_integer())
        id = it->get<std::int64_t>();

    if (type == "ping") {
        m_channel.send({{"type", "pong"}, {"id", id}});
        return std::nullopt;
    }
    if (type == "shutdown")
        return 0;
    if (type == "verify" || type == "bench" || type == "profile")
        return handleRun(request, id);
    if (type == "have_files" || type == "put_file") {
        handleFiles(type, request, id);
        return std::nullopt;
    }
    if (m_testHooks && type.rfind("test_", 0) == 0)
        return handleTestHook(type, request, id);
    m_channel.error(id, Error::failed("handle a \"" + type + "\" request", "the runner does not know the request type \"" + type + "\"", "use verify, bench, profile, have_files, put_file, ping or shutdown"),
                    false);
    return std::nullopt;
}

std::optional<int> Runner::handleRun(const nlohmann::json& json, std::int64_t id)
{
    const std::string type = json["type"].get<std::string>();
    if (!m_gpu) {
        m_channel.error(id, Error::failed("run " + type, "no GPU: " + m_deviceError, "run verify, bench and profile on a machine with an NVIDIA GPU and its driver"),
                        false);
        return std::nullopt;
    }
    // Staged files first (a client that does not share this host's files): the request then
    // reads like a local one, with folders of this runner's own.
    RequestFolders folders;
    auto local = localise(json, folders.paths);
    if (!local) {
        m_channel.error(id, local.error(), false);
        return std::nullopt;
    }
    auto request = planRun(local.value());
    if (!request) {
        m_channel.error(id, request.error(), false);
        return std::nullopt;
    }
    request->id = id;
    auto dump = streamDumpHere(request.value(), id, folders);
    if (!dump) {
        m_channel.error(id, dump.error(), false);
        return std::nullopt;
    }
    m_channel.beginRequest(id);
    struct EndBeats {
        Channel& channel;
        ~EndBeats() { channel.endRequest(); }
    } endBeats{m_channel};
    auto report = runPlanned(type, request.value(), local.value());
    exitIfContextLost(id, report);
    if (report && !dump->dir.empty())
        report = sendStreamedDump(std::move(report.value()), dump.value(), id);
    if (!report) {
        m_channel.error(id, report.error(), false);
        return std::nullopt;
    }
    sign(report.value(), request->task.directory);
    m_channel.send({{"type", "report"}, {"id", id}, {"report", std::move(report.value())}});
    return std::nullopt;
}

Result<Runner::StreamedDump> Runner::streamDumpHere(RunPlan& request, std::int64_t id, RequestFolders& folders)
{
    // A streamed dump is written here first, then sent; the report names the client's folder.
    StreamedDump dump;
    if (!request.dump || !request.dump->stream)
        return dump;
    auto base = m_files.privateDir();
    if (!base)
        return base.error();
    dump.dir = base.value() / ("dump-" + std::to_string(id));
    removeTree(dump.dir);
    folders.paths.push_back(dump.dir);
    dump.clientDir = request.dump->dir;
    request.dump->dir = dump.dir.string();
    return dump;
}

Result<nlohmann::json> Runner::runPlanned(const std::string& type, const RunPlan& request, const nlohmann::json& local)
{
    const SoftwareVersions versions{m_torchVersion, request.nvrtcVersion};
    try {
        if (type == "verify") {
            auto report = Verifier(m_channel, *m_gpu, request, versions).run();
            if (report)
                addSanitizer(report.value(), request, local);
            return report;
        }
        if (type == "bench")
            return Bencher(m_channel, *m_gpu, request, versions).run();
        return Profiler(m_channel, *m_gpu, request, versions).run();
    } catch (const std::exception& e) {
        // A bug of ours must not take the runner down with a request half answered.
        return Error::failed("run " + type, std::string("internal error: ") + e.what(), "report this as a KernelForge bug");
    }
}

void Runner::addSanitizer(nlohmann::json& report, const RunPlan& request, const nlohmann::json& local)
{
    // compute-sanitizer after a verification that ran (a lost context is handled after the run).
    // Every verify report says whether the tools ran and whether this host has them: the
    // sanitizer gate tells "not asked for" from "not there" by it.
    const bool ran = report.value("verdict", std::string()) != protocol::verdictName(protocol::Verdict::Error);
    if (request.sanitize && ran && !stickyError())
        addSanitizerSection(report, runSanitizer(m_channel, request, local));
    else if (request.sanitize)
        addSanitizerSection(report, sectionNotRun(true, ran ? "the verification lost its CUDA context"
                                                            : "the verification ended in an error"));
    else
        addSanitizerSection(report, sectionNotRun(false));
}

void Runner::exitIfContextLost(std::int64_t id, const Result<nlohmann::json>& report)
{
    // LibTorch may have met a sticky error first (its own synchronise): ask the context itself.
    noteResult(KF_CU(cuCtxSynchronize));
    if (auto sticky = stickyError()) {
        Error e = report ? cuError(*sticky, "a CUDA call", __FILE__, __LINE__) : report.error();
        if (report && report->contains("error"))
            e = protocol::errorFromMessage(report.value());
        e.why += e.why.find(cuResultName(*sticky)) == std::string::npos ? " (" + cuResultName(*sticky) + ")" : "";
        exitFatal(id, e);
    }
}

Result<nlohmann::json> Runner::sendStreamedDump(nlohmann::json report, const StreamedDump& dump, std::int64_t id)
{
    report["dump_dir"] = dump.clientDir;
    std::error_code ec;
    if (std::filesystem::is_directory(dump.dir, ec))
        if (auto sent = streamFolder(m_channel, id, dump.dir); !sent)
            return sent.error();
    return report;
}

void Runner::sign(nlohmann::json& report, const std::filesystem::path& taskDirectory)
{
    // The key is read for each report (a few microseconds): a key made or repaired while the
    // runner is warm is used from the next report on.
    auto key = protocol::loadSigningKey(true);
    std::string problem;
    if (!key) {
        problem = key.error().message();
    } else {
        // A key inside the task folder is readable by whoever writes the task's candidates.
        if (isInsideFolder(key->file, taskDirectory))
            problem = "the signing key " + key->file.string() + " lies inside the task folder, where a candidate's author "
                      "can read it; move it out and point KF_REPORT_KEY at it";
        else if (auto s = protocol::signDocument(report, key.value()); !s)
            problem = s.error().message();
    }
    if (!problem.empty()) {
        report.erase("signature");
        report["unsigned_reason"] = problem;
    }
}

std::optional<int> Runner::handleTestHook(const std::string& type, const nlohmann::json& request, std::int64_t id)
{
    // Only with KF_RUNNER_TEST_HOOKS=1: they let the supervisor's tests provoke each failure.
    if (type == "test_crash") {
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
        return 139;
    }
    if (type == "test_hang")
        testHang(request, id);
    if (type == "test_stuck") {
        // The main thread blocks for good while the heartbeat thread keeps beating: a driver
        // call that never returns.
        m_channel.beginRequest(id);
        for (;;)
            ::pause();
    }
    if (type == "test_fatal")
        exitFatal(id, Error::failed("run test_fatal", "a simulated sticky CUDA error (CUDA_ERROR_ILLEGAL_ADDRESS) requested by a test"));
    if (type == "test_garbage")
        m_channel.sendRaw("this line is not JSON {");
    else if (type == "test_prepared_run")
        testPreparedRun(request, id);
    else if (type == "test_dump_stream")
        testDumpStream(request, id);
    else if (type == "test_send")
        testSend(request, id);
    else
        m_channel.error(id, Error::failed("handle a \"" + type + "\" request", "unknown test hook \"" + type + "\"", "test_crash, test_hang, test_stuck, test_fatal, test_garbage, test_prepared_run, "
                                  "test_dump_stream or test_send"),
                        false);
    return std::nullopt;
}

void Runner::testHang(const nlohmann::json& request, std::int64_t id)
{
    std::int64_t timeout = 1000;
    for (const char* key : {"timeout_ms", "launch_timeout_ms"})
        if (auto it = request.find(key); it != request.end() && it->is_number()) {
            timeout = it->get<std::int64_t>();
            break;
        }
    m_channel.launchBegin(id, "test_hang: a launch that never ends", timeout);
    for (;;)
        ::pause();
}

void Runner::testDumpStream(const nlohmann::json& request, std::int64_t id)
{
    // Files of the given sizes (byte j is j % 251) streamed as a dump is: the transport of
    // streamed dumps, testable without a GPU.
    auto base = m_files.privateDir();
    if (!base)
        return m_channel.error(id, base.error(), false);
    RequestFolders folders;
    const std::filesystem::path dir = base.value() / ("dump-" + std::to_string(id));
    folders.paths.push_back(dir);
    if (auto files = request.find("files"); files != request.end() && files->is_object())
        for (auto it = files->begin(); it != files->end(); ++it) {
            if (!protocol::pathProblem(it.key()).empty() || !it.value().is_number_integer())
                continue;
            std::string bytes(static_cast<std::size_t>(std::max<std::int64_t>(0, it.value().get<std::int64_t>())), '\0');
            for (std::size_t j = 0; j < bytes.size(); ++j)
                bytes[j] = static_cast<char>(j % 251);
            if (auto w = writeFileAtomic(dir / it.key(), bytes); !w)
                return m_channel.error(id, w.error(), false);
        }
    auto sent = streamFolder(m_channel, id, dir);
    if (!sent)
        return m_channel.error(id, sent.error(), false);
    m_channel.send({{"type", "report"}, {"id", id}, {"report", {{"bytes", sent.value()}}}});
}

void Runner::testSend(const nlohmann::json& request, std::int64_t id)
{
    // The given messages as they are (with this request's id), then an empty report: what a
    // runner that misbehaves would send.
    if (auto messages = request.find("messages"); messages != request.end() && messages->is_array())
        for (nlohmann::json m : *messages) {
            if (!m.is_object())
                continue;
            m["id"] = id;
            m_channel.send(m);
        }
    m_channel.send({{"type", "report"}, {"id", id}, {"report", nlohmann::json::object()}});
}

void Runner::exitFatal(std::int64_t id, const Error& e)
{
    m_channel.error(id, e, true);
    m_files.removePrivateDir(); // _Exit runs no destructor
    std::fflush(stderr);
    // No destructors or atexit handlers: with a lost context they can hang or crash.
    std::_Exit(kExitFatal);
}

} // namespace kf::device
