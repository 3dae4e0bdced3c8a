#pragma once
// The runner protocol: JSON lines on the runner's stdin (requests) and stdout (answers), every
// message stamped with "protocol_version". docs/runner-protocol.md is the reference. Summary:
//
//   runner -> hello                         (Hello: device, versions, features)
//   caller -> verify | bench | profile      (RunRequest)    ping | shutdown (control)
//   runner -> progress | launch_begin | launch_end | log    (Event, any number)
//   runner -> report                        (final, success: a report, docs/report-schema.md)
//   runner -> error                         (final, failure: {what, why, hint}, fatal or not)
//
// For a runner that does not see the client's files (engine/protocol/FileTransfer.h, features
// "stage" and "dump_stream"): caller -> have_files | put_file, runner -> files (final); a verify
// with dump.stream gets its case folders back as file_chunk events before its report.
//
// A fatal error means the CUDA context is unusable (a sticky error); the runner exits after
// sending it and the supervisor starts a new one. stderr is free-form log text.
//
// A runner and a client of different protocol versions refuse each other with one sentence
// naming both versions: the client on the runner's hello, the runner on each request.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace kf::protocol {

inline constexpr int kVersion = 3;
/// The longest line either side accepts; a longer one is an error, never an allocation spree.
inline constexpr std::size_t kMaxLineBytes = std::size_t(64) << 20;

/// Which side wrote the line being read, for the sentences of errors.
enum class From { Runner, Client };

/// Parses one line: a JSON object with a string "type" and this build's "protocol_version".
/// Errors name the JSON pointer of what was wrong (never throws).
Result<nlohmann::json> parseLine(const std::string& line, From from = From::Runner);
/// The version check of parseLine alone: an Error naming both versions, or nothing.
Result<void> checkVersion(const nlohmann::json& message, From from);
/// One line: `message` stamped with protocol_version, no embedded newlines, ending in '\n'.
std::string toLine(nlohmann::json message);

nlohmann::json errorMessage(std::int64_t id, const Error& e, bool fatal);
Error errorFromMessage(const nlohmann::json& message);

} // namespace kf::protocol
