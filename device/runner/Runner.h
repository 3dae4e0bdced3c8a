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

namespace kf::device {

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
    /// Handles one parsed request; returns an exit status when the process must end.
    std::optional<int> handle(const nlohmann::json& request);
    std::optional<int> handleRun(const nlohmann::json& request, std::int64_t id);
    std::optional<int> handleTestHook(const std::string& type, const nlohmann::json& request, std::int64_t id);
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
