#pragma once
// Pieces the supervisor's two source files share (engine/runner/Supervisor.cpp speaks the protocol,
// SupervisorStart.cpp starts the process): the tags readMessage() puts in Error::what and the
// sentence helpers. Not part of any interface.

#include <string>
#include <string_view>

namespace kf::supervisor_detail {

// readMessage() tags its failures in Error::what so request() can tell a quiet runner from a
// dead or babbling one without widening the class interface. Never shown to users.
inline constexpr std::string_view kQuiet = "wait for a runner message";
inline constexpr std::string_view kEof = "read from the runner";
inline constexpr std::string_view kMalformed = "parse a runner message";
inline constexpr std::string_view kVersionMismatch = "check the runner's protocol version";

inline constexpr int kExitCheckMs = 100;                // how often a silent runner is checked for death
inline constexpr int kExitGraceMs = 2000;               // after shutdown or a fatal error, before SIGKILL
inline constexpr const char* kRunnerName = "kforge-runner";
inline constexpr int kMaxNoiseLines = 20;               // lines a remote shell may print before the hello
inline constexpr std::size_t kMaxNoiseBytes = 4096;
inline constexpr const char* kRebuildHint = "kforge and kforge-runner probably come from different builds; rebuild both";

/// The last non-blank line of `text`.
std::string lastLine(const std::string& text);
/// "during <launch>", else "while handling the <type> request".
std::string whereText(const std::string& launch, const std::string& type);
/// At most 80 characters of `line`, control characters as spaces.
std::string excerpt(const std::string& line);
/// Whether ssh's last words say the connection broke.
bool looksLikeLostConnection(const std::string& stderrTail);

} // namespace kf::supervisor_detail
