#include "device/runner/Channel.h"

#include "engine/core/Descriptor.h"
#include "engine/protocol/Messages.h"
#include "engine/protocol/Protocol.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace kf::device {

Channel::Channel()
{
    std::fflush(stdout);
    m_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (m_fd < 0)
        m_fd = STDOUT_FILENO; // cannot protect the stream; still speak the protocol
    else
        ::dup2(STDERR_FILENO, STDOUT_FILENO);
    // A vanished supervisor must end us quietly through EPIPE, not kill us mid-report.
    std::signal(SIGPIPE, SIG_IGN);
}

Channel::~Channel()
{
    {
        std::lock_guard lock(m_beatMutex);
        m_stopBeats = true;
    }
    m_beatWake.notify_all();
    if (m_beats.joinable())
        m_beats.join();
}

void Channel::beginRequest(std::int64_t id)
{
    {
        std::lock_guard lock(m_beatMutex);
        m_beatId = id;
        if (!m_beats.joinable())
            m_beats = std::thread([this] { beatLoop(); });
    }
    m_beatWake.notify_all();
}

void Channel::endRequest()
{
    std::lock_guard lock(m_beatMutex);
    m_beatId = -1;
}

void Channel::beatLoop()
{
    std::unique_lock lock(m_beatMutex);
    while (!m_stopBeats) {
        m_beatWake.wait_for(lock, std::chrono::milliseconds(kHeartbeatMs));
        if (m_stopBeats || m_beatId < 0)
            continue;
        const std::int64_t id = m_beatId;
        lock.unlock();
        write(protocol::toLine({{"type", "heartbeat"}, {"id", id}}));
        lock.lock();
    }
}

void Channel::write(const std::string& bytes)
{
    std::lock_guard lock(m_writeMutex); // whole lines only, whoever writes
    if (!writeAll(m_fd, bytes)) {
        // Nobody is listening any more: there is no one left to report to.
        std::fprintf(stderr, "kforge-runner: the protocol stream is closed; exiting\n");
        std::_Exit(0);
    }
}

void Channel::send(const nlohmann::json& message)
{
    write(protocol::toLine(message));
}

void Channel::progress(std::int64_t id, int permille, const std::string& stage)
{
    const auto now = std::chrono::steady_clock::now();
    if (permille != 0 && permille < 1000 && now - m_lastProgress < std::chrono::milliseconds(100))
        return;
    m_lastProgress = now;
    send(protocol::Event::progress(id, permille, stage).toJson());
}

void Channel::launchBegin(std::int64_t id, const std::string& label, std::int64_t timeoutMs)
{
    send(protocol::Event::launchBegin(id, label, timeoutMs).toJson());
}

void Channel::launchEnd(std::int64_t id)
{
    send(protocol::Event::launchEnd(id).toJson());
}

void Channel::log(std::int64_t id, protocol::Event::Level level, const std::string& text)
{
    send(protocol::Event::log(id, level, text).toJson());
}

void Channel::error(std::int64_t id, const Error& e, bool fatal)
{
    send(protocol::errorMessage(id, e, fatal));
}

void Channel::sendRaw(const std::string& line)
{
    write(line + "\n");
}

} // namespace kf::device
