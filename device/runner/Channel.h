#pragma once
// The runner's half of the protocol (engine/protocol/Protocol.h): one JSON object per line on the
// original stdout, nothing else. At start-up the channel keeps a private duplicate of fd 1 and
// points fd 1 at stderr, so anything LibTorch, the driver or a stray printf writes lands in the
// log instead of corrupting the message stream. Single-threaded: the request loop's thread only.

#include "engine/core/Result.h"
#include "engine/protocol/Messages.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstdint>
#include <string>

namespace kf::device {

class Channel {
public:
    /// Takes over stdout as described above. Call before anything else can print.
    Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    void send(const nlohmann::json& message);
    /// Throttled to about ten a second; 0 and 1000 always go out.
    void progress(std::int64_t id, int permille, const std::string& stage);
    /// Arms the supervisor's watchdog for one launch (or one timed sample).
    void launchBegin(std::int64_t id, const std::string& label, std::int64_t timeoutMs);
    void launchEnd(std::int64_t id);
    /// A line for the client's run log (a fallback taken, a limit hit): said once, not on stderr.
    void log(std::int64_t id, protocol::Event::Level level, const std::string& text);
    void error(std::int64_t id, const Error& e, bool fatal);
    /// Writes `line` verbatim (test hook for the supervisor's protocol-error path).
    void sendRaw(const std::string& line);

    /// While a request is in flight a thread of its own sends {"type":"heartbeat"} every
    /// kHeartbeatMs, so a client notices a frozen process (stopped, swapped out, stuck in the
    /// kernel) in seconds rather than at its idle timeout. beginRequest/endRequest bracket it.
    static constexpr int kHeartbeatMs = 500;
    void beginRequest(std::int64_t id);
    void endRequest();
    ~Channel();

private:
    void write(const std::string& bytes);
    void beatLoop();

    int m_fd = -1;
    std::mutex m_writeMutex;        // the heartbeat thread and the request loop both write
    std::chrono::steady_clock::time_point m_lastProgress{};
    std::mutex m_beatMutex;
    std::condition_variable m_beatWake;
    std::int64_t m_beatId = -1;     // the request in flight, or -1
    bool m_stopBeats = false;
    std::thread m_beats;
};

} // namespace kf::device
