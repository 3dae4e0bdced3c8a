#pragma once
// Reading a language model's reply (docs/synthesis.md, "What the model must send"). Nothing in a
// reply is trusted: these functions only cut it into the parts the loop checks next, and every
// refusal is one sentence that goes back to the model as it is and into the run folder.

#include "engine/core/Result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::synth {

/// A fenced block of Markdown: its language (the info string's first word, lower case) and text.
struct FencedBlock {
    std::string language;
    std::string text;
    int line = 0;          ///< the reply line the block's text starts on (1-based)
};

/// Every fenced block of `reply` (``` or ~~~, three or more, indented at most three spaces; a
/// closing fence is the same character, at least as long). An unclosed block runs to the end.
std::vector<FencedBlock> fencedBlocks(std::string_view reply);

/// A kernel and its plan, cut out of a codegen reply.
struct KernelReply {
    std::string source;    ///< the ```cuda block
    std::string planJson;  ///< the ```json block; empty when the plan is fenced in the source's first comment
    int planLine = 1;      ///< where the plan starts in the reply
};

/// Exactly one block marked cuda, cu, cuh, c++ or cpp, and at most one ```json block (none when
/// the plan sits in the source's first comment, as `kforge candidate add` accepts). Errors
/// (Error::why is the sentence for the model): no code block, two code blocks, two plans.
Result<KernelReply> kernelReply(std::string_view reply);

/// An interview reply: a proposed task (one ```json block) with the assumptions it made, or
/// questions for the user.
struct SpecReply {
    std::optional<std::string> taskJson;
    std::vector<std::string> questions;    ///< lines "QUESTION: ..."
    std::vector<std::string> assumptions;  ///< lines "ASSUMPTION: ..."
};

/// Errors: neither a task block nor a question, two task blocks.
Result<SpecReply> specReply(std::string_view reply);

} // namespace kf::synth
