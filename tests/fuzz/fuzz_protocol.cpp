// The runner protocol in both directions: a line as the client reads it from a runner, and as the
// runner reads it from a client (requests, and the staging requests have_files and put_file).
#include "engine/protocol/FileTransfer.h"
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
        if (auto m = kf::protocol::RunnerMessage::decode(j.value())) {
            if (m->type == kf::protocol::RunnerMessage::Type::Hello)
                (void)m->hello.environment();
            if (m->type == kf::protocol::RunnerMessage::Type::FileChunk) {
                // A chunk we read is one we would write the same way, and its path stays inside.
                if (!kf::protocol::pathProblem(m->chunk.path).empty() || !kf::protocol::FileChunk::fromJson(m->chunk.toJson()))
                    __builtin_trap();
            }
        }
        if (auto h = kf::protocol::HaveFiles::fromJson(j.value()))
            if (!kf::protocol::HaveFiles::fromJson(h->toJson()))
                __builtin_trap();
        if (auto p = kf::protocol::PutFile::fromJson(j.value()))
            if (!kf::protocol::PutFile::fromJson(p->toJson()))
                __builtin_trap();
        if (auto r = kf::protocol::RunRequest::fromJson(j.value())) {
            auto back = kf::protocol::RunRequest::fromJson(r->toJson());
            if (!back)
                __builtin_trap(); // a request we wrote that we cannot read
            (void)r->missingFeature({"dump"});
            for (const auto& [path, sha] : r->taskFiles)
                if (!kf::protocol::pathProblem(path).empty() || !kf::protocol::isSha256(sha))
                    __builtin_trap(); // a path the reader let through that could leave its folder
        }
        (void)kf::protocol::toLine(j.value());
    }
    return 0;
}
