#pragma once
// The runner's messages other than reports, as values (docs/runner-protocol.md): its hello, the
// events it sends while it works, and the decoding of any line it writes into one of them.

#include "engine/core/Result.h"
#include "engine/protocol/FileTransfer.h"
#include "engine/protocol/Report.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf::protocol {

/// The GPU a runner found (absent when it found none).
struct DeviceSummary : GpuFacts {
    std::int64_t ordinal = 0;
    std::string arch;                   ///< "sm_90"
    std::int64_t persistingL2MaxBytes = 0;
    std::int64_t memoryBusBits = 0;
    std::int64_t maxSharedPerBlock = 0;
    std::int64_t maxSharedPerBlockOptin = 0;
    bool ecc = false;
    bool pageableMemoryAccess = false;
    std::string uuid;                   ///< "GPU-ac7d9fee-…" (protocol 3), or ""
    std::string pciBusId;               ///< "0000:18:00.0" (protocol 3), or ""
};

/// compute-sanitizer on the runner's host (protocol 3), when found.
struct SanitizerTool {
    std::string path;
    std::string version;                ///< "2025.3.1.0"
};

/// One GPU the runner can see (protocol 3): a `"gpus": "all"` endpoint becomes one endpoint per entry.
struct VisibleDevice {
    int ordinal = 0;                    ///< CUDA's ordinal under the runner's CUDA_VISIBLE_DEVICES
    std::string gpu;
    std::string uuid;                   ///< "GPU-…", or "" when the driver does not say
};

struct Hello {
    std::optional<DeviceSummary> device;
    std::string deviceError;            ///< why there is no device
    std::string deviceErrorKind;        ///< Error::kind of that reason: kGpuOutOfMemory for a full GPU
    std::vector<std::string> features;  ///< optional request fields this runner understands
    std::string torch;
    std::string driver;
    std::int64_t cudaDriverApi = 0;
    std::string nvrtc;
    // Protocol 3: where the runner runs, so a pool can tell GPUs apart and reports can say where.
    std::string host;                   ///< the runner's host name
    std::string visibleDevices;         ///< $CUDA_VISIBLE_DEVICES as the runner saw it ("" when unset)
    std::string runnerBuild;            ///< "0.9.0 (1e2b645)"
    std::string signingKeyId;           ///< the id of the key the runner signs with, never the key
    std::optional<SanitizerTool> sanitizer;
    std::vector<VisibleDevice> devices; ///< every GPU the runner sees, not only the one it uses (device 0)

    /// "host/GPU-uuid" (or "host/pci bus id", "host/ordinal"): two endpoints with the same key share one GPU.
    std::string gpuKey() const;

    /// True when the runner lists `feature` ("dump", "inputs_dir", ...). A runner ignores
    /// request fields it does not know, so a client asks before relying on one.
    bool has(const std::string& feature) const;
    /// "sm_90", or empty without a device.
    std::string arch() const;
    /// A report's environment block from what the hello says (for reports we make ourselves).
    Environment environment() const;

    nlohmann::json toJson() const;
    static Result<Hello> fromJson(const nlohmann::json& j);
};

/// Something the runner says while a request is in flight.
struct Event {
    enum class Kind { Progress, LaunchBegin, LaunchEnd, Log };
    enum class Level { Info, Warning };
    Kind kind = Kind::Progress;
    std::int64_t id = 0;
    int permille = 0;                   ///< progress: 0..1000
    std::string stage;                  ///< progress: "reference", "shape 2 of 5", ...
    std::string label;                  ///< launch_begin: what is launched
    std::int64_t timeoutMs = 0;         ///< launch_begin: the watchdog's budget (0: none)
    Level level = Level::Info;          ///< log
    std::string text;                   ///< log

    static Event progress(std::int64_t id, int permille, std::string stage);
    static Event launchBegin(std::int64_t id, std::string label, std::int64_t timeoutMs);
    static Event launchEnd(std::int64_t id);
    static Event log(std::int64_t id, Level level, std::string text);

    nlohmann::json toJson() const;
    static Result<Event> fromJson(const nlohmann::json& j);
};

/// "info", "warning".
const char* levelName(Event::Level l);

/// Any message a runner writes, decoded.
struct RunnerMessage {
    /// Files: the answer to have_files and put_file (feature "stage"). FileChunk: a piece of a
    /// streamed dump (feature "dump_stream"), an event like progress, handed to the request's file sink.
    enum class Type { Hello, Event, Report, Error, Pong, Heartbeat, Files, FileChunk };
    Type type = Type::Event;
    std::optional<std::int64_t> id;     ///< the request it answers (absent in hello)
    Hello hello;                        ///< Type::Hello
    Event event;                        ///< Type::Event
    nlohmann::json report;              ///< Type::Report: the report object (read with RunReport)
    Error error;                        ///< Type::Error
    bool fatal = false;                 ///< Type::Error: the CUDA context is lost
    std::vector<std::string> missing;   ///< Type::Files: the blobs the runner still lacks
    FileChunk chunk;                    ///< Type::FileChunk

    /// Decodes a parsed line (protocol::parseLine). Unknown types and fields of the wrong type
    /// are errors naming the JSON pointer.
    static Result<RunnerMessage> decode(const nlohmann::json& j);
};

} // namespace kf::protocol
