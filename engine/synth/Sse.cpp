// The server-sent events reader (Sse.h): WHATWG's event-stream interpretation, incremental and
// bounded.
#include "engine/synth/Sse.h"

#include "engine/synth/ModelClient.h"

#include <charconv>

namespace kf::synth {

Result<void> SseParser::fail(std::string why)
{
    m_failed = true;
    m_error = Error::failed("read the model's event stream", std::move(why), "the server does not speak server-sent events as the chosen provider does; check the base URL "
                    "and the provider").withKind(kModelMalformed);
    m_line.clear();
    m_line.shrink_to_fit();
    m_pending = SseEvent{};
    return m_error;
}

Result<void> SseParser::feed(std::string_view bytes, const SseEventFn& onEvent)
{
    if (m_failed)
        return m_error;
    size_t i = 0;
    if (m_skipLf && !bytes.empty()) {
        m_skipLf = false;
        if (bytes[0] == '\n')
            i = 1;
    }
    while (i < bytes.size()) {
        // The next line end in this piece, if any.
        size_t end = i;
        while (end < bytes.size() && bytes[end] != '\n' && bytes[end] != '\r')
            ++end;
        const std::string_view part = bytes.substr(i, end - i);
        if (m_line.size() + part.size() > m_limits.maxLineBytes)
            return fail("a line of the event stream is longer than " + std::to_string(m_limits.maxLineBytes / 1024)
                        + " KiB");
        if (end == bytes.size()) {
            m_line.append(part);
            break;
        }
        Result<void> r;
        if (m_line.empty()) {
            r = line(part, onEvent);
        } else {
            m_line.append(part);
            std::string whole;
            whole.swap(m_line);
            r = line(whole, onEvent);
        }
        if (!r)
            return r;
        i = end + 1;
        if (bytes[end] == '\r') {
            if (i < bytes.size()) {
                if (bytes[i] == '\n')
                    ++i;
            } else {
                m_skipLf = true;
            }
        }
    }
    return {};
}

Result<void> SseParser::finish(const SseEventFn& onEvent)
{
    if (m_failed)
        return m_error;
    if (!m_line.empty()) {
        std::string last;
        last.swap(m_line);
        // A last line without its end is still a field; the event it belongs to has no blank line
        // after it and is dropped below.
        if (auto r = line(last, onEvent); !r)
            return r;
    }
    (void)onEvent;
    m_pending = SseEvent{};
    m_dataSeen = false;
    m_skipLf = false;
    return {};
}

Result<void> SseParser::line(std::string_view text, const SseEventFn& onEvent)
{
    if (text.empty()) {
        // Dispatch: an event without data lines is not dispatched (its fields are reset).
        if (m_dataSeen) {
            SseEvent ev = std::move(m_pending);
            if (ev.event.empty())
                ev.event = "message";
            ev.id = m_lastId;
            ++m_events;
            m_pending = SseEvent{};
            m_dataSeen = false;
            if (onEvent)
                onEvent(ev);
        } else {
            m_pending = SseEvent{};
        }
        return {};
    }
    if (text[0] == ':')
        return {};
    std::string_view field = text;
    std::string_view value;
    if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
        field = text.substr(0, colon);
        value = text.substr(colon + 1);
        if (!value.empty() && value[0] == ' ')
            value.remove_prefix(1);
    }
    if (field == "data") {
        const size_t grown = m_pending.data.size() + (m_dataSeen ? 1 : 0) + value.size();
        if (grown > m_limits.maxDataBytes)
            return fail("an event of the stream carries more than " + std::to_string(m_limits.maxDataBytes / 1024)
                        + " KiB of data");
        if (m_dataSeen)
            m_pending.data += '\n';
        m_pending.data.append(value);
        m_dataSeen = true;
    } else if (field == "event") {
        m_pending.event.assign(value);
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos)
            m_lastId.assign(value);
    } else if (field == "retry") {
        long long ms = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        bool digits = !value.empty() && ec == std::errc() && end == value.data() + value.size();
        for (char c : value)
            digits = digits && c >= '0' && c <= '9';
        if (digits)
            m_pending.retryMs = ms;
    }
    // Other fields are ignored.
    return {};
}

} // namespace kf::synth
