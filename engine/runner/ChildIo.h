#pragma once
// The POSIX plumbing of a child process spoken to over pipes (the runner supervisor's): deadlines,
// reads, writes, pipes and the sentences a process's end becomes. Not thread-safe: one caller
// per set of descriptors.

#include "engine/compile/CompileTypes.h" // CancelToken

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kf::childio {

using Clock = std::chrono::steady_clock;

/// How often a blocked write or read looks at its cancellation token (its latency bound).
constexpr int kPollSliceMs = 50;
/// The most of a child's stderr kept for its "last words".
constexpr std::size_t kStderrTailBytes = 16 * 1024;

int msUntil(Clock::time_point deadline);        ///< milliseconds left, 0 when past
Clock::time_point after(std::int64_t ms);       ///< now + ms (negative counts as 0)
void closeFd(int& fd);                          ///< closes and sets -1; -1 is left alone
std::string secondsText(std::int64_t ms);       ///< "2.5 s"
std::string signalName(int sig);                ///< "SIGSEGV (segmentation fault)"
bool processExited(pid_t pid);                  ///< reaped or gone, without blocking

/// Appends to a tail kept at kStderrTailBytes.
void appendTail(std::string& tail, const char* data, std::size_t n);

enum class ReadEnd { Again, Eof };
/// Reads everything available from a non-blocking fd into `sink` (kept as a bounded tail when
/// `tail`); on EOF or a hard error closes it.
ReadEnd drain(int& fd, std::string& sink, bool tail);

/// The last meaningful lines of a child's stderr tail, for a message ("" when none).
std::string lastWords(const std::string& tail);
/// `hint` followed by "the runner's last words: …" when the tail has any.
std::string withLastWords(std::string hint, const std::string& tail);

enum class WriteEnd { Done, ReaderGone, TimedOut, Cancelled };
/// Writes all of `data` to `toFd` before `deadline` while draining the child's stdout and stderr
/// (a child blocked on a full stderr pipe would never read the rest of a large request).
/// SIGPIPE from a child that died meanwhile is swallowed: the result says ReaderGone.
WriteEnd writeAll(int toFd, std::string_view data, Clock::time_point deadline, const CancelToken* cancel, int& outFd,
                  std::string& outBuffer, int& errFd, std::string& errTail);

/// Moves a pipe end above 0..2 (dup2 onto the same number would keep FD_CLOEXEC).
bool moveAboveStdio(int& fd);
/// A close-on-exec pipe whose ends are above stdio.
bool makePipe(int fds[2]);
/// The full path of `name` on PATH, or "".
std::string findOnPath(const std::string& name);

} // namespace kf::childio
