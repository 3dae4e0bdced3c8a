#pragma once
// The runner protocol: JSON lines on the runner's stdin (requests) and stdout (events).
// Versioned; docs/runner-protocol.md is the reference. Summary:
//
//   runner -> {"type":"hello","protocol":1,"device":{...}|null,"device_error":"...","versions":{...}}
//   caller -> {"type":"verify"|"bench"|"ping"|"shutdown","id":N, ...request fields...}
//   runner -> {"type":"progress","id":N,"permille":P,"stage":"..."}            (any number)
//   runner -> {"type":"launch_begin","id":N,"label":"...","timeout_ms":T}      (watchdog armed)
//   runner -> {"type":"launch_end","id":N}                                     (watchdog disarmed)
//   runner -> {"type":"report","id":N,"report":{...}}                          (final, success)
//   runner -> {"type":"error","id":N,"fatal":bool,"error":{"what","why","hint"}} (final, failure)
//
// A fatal error means the CUDA context is unusable (sticky error); the runner exits after
// sending it and the supervisor starts a new one. stderr is free-form log text.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kf::protocol {

inline constexpr int kVersion = 1;

/// Parses one line; errors name what was wrong with it (never throws).
Result<nlohmann::json> parseLine(const std::string& line);
/// One line, no embedded newlines, terminated by '\n'.
std::string toLine(const nlohmann::json& message);

nlohmann::json errorMessage(std::int64_t id, const Error& e, bool fatal);
Error errorFromMessage(const nlohmann::json& message);

} // namespace kf::protocol
