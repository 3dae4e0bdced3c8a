// What a language model sends back to synthesis and what a user's models.json holds: the first
// byte picks the reader. byte % 3 == 0: kernelReply (one code block, at most one plan); == 1:
// specReply (one task block or QUESTION: lines); == 2: parseModelsConfig. Whatever reads must hold
// the readers' promises: blocks cut from the text, a code block that is not empty, questions and
// assumptions bounded, a configuration whose default and escalation name models in it.
#include "engine/synth/ModelsConfig.h"
#include "engine/synth/Reply.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 3) {
    case 0: {
        auto r = kf::synth::kernelReply(text);
        if (r && (r->source.empty() || r->source.size() > text.size() || r->planJson.size() > text.size()))
            __builtin_trap();
        size_t total = 0;
        for (const kf::synth::FencedBlock& b : kf::synth::fencedBlocks(text))
            total += b.text.size();
        if (total > text.size() + 1)
            __builtin_trap();
        break;
    }
    case 1: {
        auto r = kf::synth::specReply(text);
        if (r) {
            if (!r->taskJson && r->questions.empty())
                __builtin_trap();
            for (const std::string& q : r->questions)
                if (q.empty() || q.size() > 2000)
                    __builtin_trap();
        }
        break;
    }
    default: {
        auto c = kf::synth::parseModelsConfig(text, "models.json");
        if (c) {
            if (!c->defaultModel.empty() && !c->find(c->defaultModel))
                __builtin_trap();
            auto again = kf::synth::parseModelsConfig(c->toJson(), "again");
            if (!again || again->models.size() != c->models.size())
                __builtin_trap();
        }
        break;
    }
    }
    return 0;
}
