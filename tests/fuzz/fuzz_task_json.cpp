// task.json: the JSON text a user (or an agent) wrote, parsed and validated as loadTask does,
// then written back and read again (the writer must accept everything the reader accepts). An
// op or tape reference then goes through the candidate generator (docs/generate.md), which must
// generate or refuse with a sentence, never crash.
#include "engine/core/JsonReader.h"
#include "engine/generate/Generate.h"
#include "engine/task/Task.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto j = kf::json::parseText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz task.json");
    if (!j)
        return 0;
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
