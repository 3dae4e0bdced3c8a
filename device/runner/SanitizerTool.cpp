#include "device/runner/SanitizerTool.h"

#include "engine/core/Process.h"

#include <mutex>
#include <sstream>

namespace kf::device {

const std::optional<protocol::SanitizerTool>& sanitizerTool()
{
    static std::optional<protocol::SanitizerTool> tool;
    static std::once_flag once;
    std::call_once(once, [] {
        const std::string path = findTool("compute-sanitizer", "KF_COMPUTE_SANITIZER");
        if (path.empty())
            return;
        auto out = runProcess({path, "--version"}, 15000);
        if (!out || out->exitCode != 0)
            return;
        // "NVIDIA (R) Compute Sanitizer … Version 2025.3.1.0 (build 36400806) (public-release)"
        std::istringstream words(out->out);
        std::string w, version;
        while (words >> w)
            if (w == "Version" && words >> version)
                break;
        if (version.empty())
            return;
        tool = protocol::SanitizerTool{path, version};
    });
    return tool;
}

} // namespace kf::device
