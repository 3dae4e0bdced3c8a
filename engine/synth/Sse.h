#pragma once
// Server-sent events (the text/event-stream format both model APIs stream their replies in), read
// incrementally as bytes arrive from the network: lines end in \n, \r\n or \r (a \r\n split
// across two reads is one line end), `field: value` with one leading space of the value dropped,
// `data` lines joined with \n, comment lines (starting with ':') ignored, and a blank line
// dispatching the event. Bounded: a line or an event's data past its limit is an error, so a
// server that never ends a line cannot make the reader grow without end. Pure: no I/O.

#include "engine/core/Result.h"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace kf::synth {

/// One dispatched event. `event` is "message" when the stream named none.
struct SseEvent {
    std::string event;
    std::string data;
    std::string id;
    /// The last `retry` field's milliseconds, or -1 when the event carried none.
    long long retryMs = -1;
};

struct SseLimits {
    std::size_t maxLineBytes = 1024 * 1024;
    std::size_t maxDataBytes = 4 * 1024 * 1024;
};

using SseEventFn = std::function<void(const SseEvent&)>;

/// Feed it the stream's bytes in pieces of any size; it calls back once per complete event, in
/// order. The first error (Error::kind kModelMalformed) is final: later calls return it again.
class SseParser {
public:
    explicit SseParser(SseLimits limits = {}) : m_limits(limits) {}

    /// Reads `bytes`, calling `onEvent` for every event they complete.
    Result<void> feed(std::string_view bytes, const SseEventFn& onEvent);
    /// The stream ended: a last line without its line end is read, and an event that lacks only
    /// its blank line is dropped (as WHATWG says a user agent does).
    Result<void> finish(const SseEventFn& onEvent);

    /// Events dispatched so far.
    std::size_t events() const { return m_events; }

private:
    Result<void> line(std::string_view text, const SseEventFn& onEvent);
    Result<void> fail(std::string why);

    SseLimits m_limits;
    std::string m_line;           // the line read so far (no line end)
    bool m_skipLf = false;        // the previous piece ended in \r: a leading \n belongs to it
    bool m_dataSeen = false;      // the pending event has at least one data line
    SseEvent m_pending;
    std::string m_lastId;         // WHATWG: the id persists across events until set again
    std::size_t m_events = 0;
    bool m_failed = false;
    Error m_error;
};

} // namespace kf::synth
