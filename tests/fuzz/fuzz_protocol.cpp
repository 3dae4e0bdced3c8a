// The runner protocol in both directions: a line as the client reads it from a runner, and as the
// runner reads it from a client (requests).
#include "engine/protocol/Messages.h"
#include "engine/protocol/Protocol.h"
#include "engine/protocol/RunRequest.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string line(reinterpret_cast<const char*>(data), size);
    for (auto from : {kf::protocol::From::Runner, kf::protocol::From::Client}) {
        auto j = kf::protocol::parseLine(line, from);
        if (!j)
            continue;
        if (auto m = kf::protocol::RunnerMessage::decode(j.value()); m && m->type == kf::protocol::RunnerMessage::Type::Hello)
            (void)m->hello.environment();
        if (auto r = kf::protocol::RunRequest::fromJson(j.value())) {
            auto back = kf::protocol::RunRequest::fromJson(r->toJson());
            if (!back)
                __builtin_trap(); // a request we wrote that we cannot read
            (void)r->missingFeature({"dump"});
        }
        (void)kf::protocol::toLine(j.value());
    }
    return 0;
}
