// What a model server streams back (engine/synth/Sse.h, engine/synth/WireFormat.h): the bytes fed
// to SseParser whole and again in pieces of fuzzer-chosen sizes (the same events and the same
// verdict must come out), each event through the OpenAI or Anthropic decoder (the first byte
// picks), and the same bytes as a non-streaming reply and as an error body. The reply text may
// never pass its bound; a quoted error message never passes 300 bytes; redaction leaves no secret.
#include "engine/synth/Sse.h"
#include "engine/synth/WireFormat.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

struct Fed {
    std::vector<std::string> events;   // event, data and id of each, joined
    bool ok = true;
};

Fed feed(std::string_view text, const std::vector<size_t>& cuts, const kf::synth::SseLimits& limits)
{
    Fed out;
    kf::synth::SseParser parser(limits);
    auto onEvent = [&](const kf::synth::SseEvent& e) {
        out.events.push_back(e.event + '\0' + e.data + '\0' + e.id + '\0' + std::to_string(e.retryMs));
    };
    size_t at = 0;
    for (size_t cut : cuts) {
        if (!out.ok || cut < at || cut > text.size())
            continue;
        out.ok = parser.feed(text.substr(at, cut - at), onEvent).ok();
        at = cut;
    }
    if (out.ok)
        out.ok = parser.feed(text.substr(at), onEvent).ok();
    if (out.ok)
        out.ok = parser.finish(onEvent).ok();
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    const bool anthropic = data[0] & 1;
    kf::synth::SseLimits limits;
    limits.maxLineBytes = 64 + (data[0] >> 1) * 64;
    limits.maxDataBytes = limits.maxLineBytes * 4;
    const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);

    // Piece sizes from a small generator seeded by the second byte.
    std::vector<size_t> cuts;
    std::uint32_t seed = data[1] * 2654435761u + 1;
    for (size_t at = 0; at < text.size();) {
        seed = seed * 1103515245u + 12345u;
        at += 1 + (seed >> 16) % 17;
        cuts.push_back(std::min(at, text.size()));
    }
    const Fed whole = feed(text, {}, limits);
    const Fed pieces = feed(text, cuts, limits);
    if (whole.ok != pieces.ok || whole.events != pieces.events)
        __builtin_trap();

    kf::synth::StreamState state;
    state.maxReplyBytes = 256;
    kf::synth::SseParser parser(limits);
    bool failed = false;
    (void)parser.feed(text, [&](const kf::synth::SseEvent& e) {
        if (failed)
            return;
        const auto r = anthropic ? kf::synth::decodeAnthropicEvent(e, state) : kf::synth::decodeOpenAiEvent(e, state);
        failed = !r.ok();
        if (state.text.size() > state.maxReplyBytes)
            __builtin_trap();
    });

    kf::synth::StreamState body;
    body.maxReplyBytes = 256;
    (void)(anthropic ? kf::synth::decodeAnthropicBody(text, body) : kf::synth::decodeOpenAiBody(text, body));
    if (body.text.size() > body.maxReplyBytes)
        __builtin_trap();

    if (kf::synth::serverErrorMessage(text).size() > 300)
        __builtin_trap();
    if (text.size() >= 4) {
        const std::string secret(text.substr(0, 4));
        // A secret sharing no byte with the marker cannot be formed again across a replacement.
        if (secret.find_first_of("[redacted]") == std::string::npos
            && kf::synth::redact(std::string(text), secret).find(secret) != std::string::npos)
            __builtin_trap();
    }
    return 0;
}
