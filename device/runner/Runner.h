#pragma once
// The runner process: start-up (driver, device, primary context, LibTorch), the hello message,
// and the request loop on stdin. One request at a time on this thread; a verify or bench request
// runs to its report or error before the next line is read.

#include "device/runner/Channel.h"
#include "device/runner/FileStore.h"
#include "device/runner/GpuContext.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace kf::protocol {
struct Hello;
}

namespace kf::device {

struct RunPlan;

class Runner {
public:
    /// Exit status after a sticky CUDA error (the supervisor restarts the runner).
    static constexpr int kExitFatal = 70;

    explicit Runner(Channel& channel);

    /// Brings up CUDA (or decides on CPU mode) and LibTorch, then sends hello.
    void start();
    /// Reads requests until "shutdown" or end of input; returns the process exit status.
    int serve(std::istream& in);

private:
    /// Folders a request made (staged files, a streamed dump), removed when it ends.
    struct RequestFolders {
        std::vector<std::filesystem::path> paths;
        RequestFolders() = default;
        RequestFolders(const RequestFolders&) = delete;
        RequestFolders& operator=(const RequestFolders&) = delete;
        ~RequestFolders();
    };
    /// A dump streamed back to the client: written first in `dir` on this runner; the report
    /// names the client's folder.
    struct StreamedDump {
        std::filesystem::path dir;   ///< empty: the dump is not streamed
        std::string clientDir;
    };

    // Start-up: the GPU (or why there is none, in m_deviceError), then LibTorch, then hello.
    std::optional<GpuContext> bringUpGpu();
    void startTorch();
    protocol::Hello hello() const;

    /// Handles one parsed request; returns an exit status when the process must end.
    std::optional<int> handle(const nlohmann::json& request);
    std::optional<int> handleRun(const nlohmann::json& request, std::int64_t id);
    // handleRun's steps: where a streamed dump goes (`request` then writes there), the run itself,
    // the end of the process when the run lost the CUDA context, and the dump sent back.
    Result<StreamedDump> streamDumpHere(RunPlan& request, std::int64_t id, RequestFolders& folders);
    Result<nlohmann::json> runPlanned(const std::string& type, const RunPlan& request, const nlohmann::json& local);
    /// A verify report's sanitizer section: the tools' findings, or why they did not run.
    void addSanitizer(nlohmann::json& report, const RunPlan& request, const nlohmann::json& local);
    void exitIfContextLost(std::int64_t id, const Result<nlohmann::json>& report);
    Result<nlohmann::json> sendStreamedDump(nlohmann::json report, const StreamedDump& dump, std::int64_t id);

    std::optional<int> handleTestHook(const std::string& type, const nlohmann::json& request, std::int64_t id);
    [[noreturn]] void testHang(const nlohmann::json& request, std::int64_t id);
    void testDumpStream(const nlohmann::json& request, std::int64_t id);
    void testSend(const nlohmann::json& request, std::int64_t id);
    /// have_files and put_file (staging, docs/runner-protocol.md "Files").
    void handleFiles(const std::string& type, const nlohmann::json& request, std::int64_t id);
    /// A request whose files were staged, made local: task_files and inputs_files replaced by
    /// task_dir and inputs_dir, folders of this runner built from its blobs. `folders` gets them,
    /// to be removed when the request ends. An unstaged request comes back as it was.
    Result<nlohmann::json> localise(const nlohmann::json& request, std::vector<std::filesystem::path>& folders);
    /// Test hook test_prepared_run: a run request made local and planned as handleRun does, then
    /// its reference evaluated on the CPU at its first shape; answers what the runner read.
    void testPreparedRun(const nlohmann::json& request, std::int64_t id);
    [[noreturn]] void exitFatal(std::int64_t id, const Error& e);
    /// Signs `report` with the user's key, or records in it why it is unsigned.
    void sign(nlohmann::json& report, const std::filesystem::path& taskDirectory);

    Channel& m_channel;
    FileStore m_files;
    std::optional<GpuContext> m_gpu;
    std::string m_deviceError;
    std::string m_deviceErrorKind;   ///< kGpuOutOfMemory when the GPU is there but full
    std::vector<protocol::VisibleDevice> m_devices;   ///< every GPU CUDA shows (the hello lists them)
    std::string m_torchVersion;
    int m_driverApi = 0;
    bool m_testHooks = false;
};

} // namespace kf::device
