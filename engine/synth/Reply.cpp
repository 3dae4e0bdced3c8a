#include "engine/synth/Reply.h"

#include "engine/core/Text.h"

#include <algorithm>
#include <cctype>

namespace kf::synth {
namespace {

Error refuse(std::string why)
{
    return Error::failed("read the model's reply", std::move(why));
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

// A fence line: up to three spaces, then three or more ` or ~. Returns the run length, 0 if none.
size_t fenceRun(std::string_view line, char& ch, std::string_view& info)
{
    size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ')
        ++i;
    if (i >= line.size() || (line[i] != '`' && line[i] != '~'))
        return 0;
    ch = line[i];
    size_t n = 0;
    while (i + n < line.size() && line[i + n] == ch)
        ++n;
    if (n < 3)
        return 0;
    info = text::trim(line.substr(i + n));
    if (ch == '`' && info.find('`') != std::string_view::npos)
        return 0;   // CommonMark: a backtick fence's info string has no backticks
    return n;
}

bool isCode(const std::string& lang)
{
    return lang == "cuda" || lang == "cu" || lang == "cuh" || lang == "c++" || lang == "cpp";
}

} // namespace

std::vector<FencedBlock> fencedBlocks(std::string_view reply)
{
    std::vector<FencedBlock> blocks;
    std::optional<FencedBlock> open;
    char openCh = 0;
    size_t openRun = 0;
    int number = 0;
    size_t pos = 0;
    while (pos <= reply.size()) {
        size_t nl = reply.find('\n', pos);
        std::string_view line = reply.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (nl == std::string_view::npos && line.empty() && pos > 0)
            break;   // the empty "line" after the final newline
        ++number;
        char ch = 0;
        std::string_view info;
        const size_t run = fenceRun(line, ch, info);
        if (open) {
            if (run >= openRun && ch == openCh && info.empty()) {
                blocks.push_back(std::move(*open));
                open.reset();
            } else {
                open->text.append(line).push_back('\n');
            }
        } else if (run > 0) {
            open = FencedBlock{};
            const size_t space = info.find_first_of(" \t{");
            open->language = lower(info.substr(0, space));
            open->line = number + 1;
            openCh = ch;
            openRun = run;
        }
        if (nl == std::string_view::npos)
            break;
        pos = nl + 1;
    }
    if (open)
        blocks.push_back(std::move(*open));
    return blocks;
}

Result<KernelReply> kernelReply(std::string_view reply)
{
    KernelReply out;
    int code = 0, plans = 0;
    for (FencedBlock& b : fencedBlocks(reply)) {
        if (isCode(b.language)) {
            ++code;
            out.source = std::move(b.text);
        } else if (b.language == "json") {
            ++plans;
            out.planJson = std::move(b.text);
            out.planLine = b.line;
        }
    }
    if (code == 0)
        return refuse("the reply has no ```cuda block: send the whole kernel file in one ```cuda block and its launch plan "
                      "in one ```json block");
    if (code > 1)
        return refuse("the reply has " + std::to_string(code) + " ```cuda blocks: send exactly one, the whole .cu file");
    if (plans > 1)
        return refuse("the reply has " + std::to_string(plans) + " ```json blocks: send exactly one launch plan");
    if (text::trim(out.source).empty())
        return refuse("the ```cuda block is empty: send the whole kernel file");
    return out;
}

Result<SpecReply> specReply(std::string_view reply)
{
    SpecReply out;
    int specs = 0;
    for (FencedBlock& b : fencedBlocks(reply))
        if (b.language == "json") {
            ++specs;
            out.taskJson = std::move(b.text);
        }
    // QUESTION: / ASSUMPTION: lines outside blocks (a line inside the JSON would not start so).
    size_t pos = 0;
    while (pos < reply.size()) {
        size_t nl = reply.find('\n', pos);
        std::string_view line = text::trim(reply.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
        for (std::string_view marker : {"- ", "* "})
            if (text::startsWith(line, marker))
                line = text::trim(line.substr(2));
        auto take = [&](std::string_view key, std::vector<std::string>& into) {
            if (line.size() > key.size() && lower(line.substr(0, key.size())) == key) {
                std::string_view rest = text::trim(line.substr(key.size()));
                if (!rest.empty())
                    into.push_back(text::clipUtf8(rest, 2000));
            }
        };
        take("question:", out.questions);
        take("assumption:", out.assumptions);
        if (nl == std::string_view::npos)
            break;
        pos = nl + 1;
    }
    if (specs > 1)
        return refuse("the reply has " + std::to_string(specs) + " ```json blocks: send exactly one task.json");
    if (specs == 0 && out.questions.empty())
        return refuse("the reply has neither a ```json block with the task nor a line starting with QUESTION:");
    return out;
}

} // namespace kf::synth
