// task.json: the JSON text a user (or an agent) wrote, parsed (and compared with what nlohmann's
// own parser reads) and validated as loadTask does, then written back and read again (the writer
// must accept everything the reader accepts). An op or tape reference then goes through the candidate generator (docs/generate.md), which must
// generate or refuse with a sentence, never crash.
#include "engine/core/JsonReader.h"
#include "engine/generate/Generate.h"
#include "engine/task/Task.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto j = kf::json::parseText(text, "fuzz task.json");
    if (!j)
        return 0;
    // The reader builds values itself from nlohmann's SAX events (engine/core/JsonReader.cpp);
    // what it accepts, nlohmann's own parser must accept and read as the same value.
    const auto plain = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (plain.is_discarded() || plain != j.value())
        __builtin_trap();
    auto task = kf::parseTask(j.value(), "fuzz task.json");
    if (!task)
        return 0;
    auto again = kf::parseTask(kf::taskToJson(task.value()), "fuzz task.json (written back)");
    if (!again)
        __builtin_trap(); // the writer produced something its own reader refuses
    if (auto steps = kf::gen::opReferenceSteps(task.value())) {
        auto generated = kf::gen::generateCandidate(task.value(), steps.value());
        if (!generated && generated.error().why.empty())
            __builtin_trap(); // a refusal must say why
    }
    return 0;
}
