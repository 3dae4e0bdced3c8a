#include "engine/registry/KernelId.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

namespace kf {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// Letters, digits and '_' kept; anything else becomes '-'; runs collapse.
std::string clean(const std::string& s, bool keepUnderscore)
{
    std::string out;
    for (unsigned char c : lower(s)) {
        const bool ok = std::isalnum(c) || (keepUnderscore && c == '_');
        const char ch = ok ? char(c) : '-';
        if (ch == '-' && (out.empty() || out.back() == '-'))
            continue;
        out += ch;
    }
    while (!out.empty() && out.back() == '-')
        out.pop_back();
    return out;
}

} // namespace

std::string gpuSlug(const std::string& gpuName)
{
    static const std::set<std::string> vendor = {"nvidia", "geforce", "tesla", "quadro", "corporation"};
    static const std::regex noise(R"(pcie|sxm\d*|hbm\d*e?|\d+gb|nvl\d*|mig.*)");
    std::vector<std::string> tokens;
    std::string token;
    std::istringstream in(lower(gpuName));
    while (std::getline(in, token, ' ')) {
        std::string part;
        std::istringstream parts(token);
        while (std::getline(parts, part, '-')) {
            part = clean(part, false);
            // Parts longer than any real marketing token are kept as they are (std::regex recurses per character).
            if (!part.empty() && !vendor.count(part) && !(part.size() <= 64 && std::regex_match(part, noise)))
                tokens.push_back(part);
        }
    }
    if (tokens.empty())
        return "gpu";
    if ((tokens[0] == "rtx" || tokens[0] == "gtx" || tokens[0] == "titan") && tokens.size() > 1)
        return tokens[0] + tokens[1];
    return tokens[0];
}

std::string opSlug(const Task& task)
{
    std::string op;
    if (task.reference.kind == Reference::Kind::TorchScript) {
        op = task.name;
    } else {
        for (const OpStep& s : task.reference.steps)
            op += (op.empty() ? "" : "_") + s.op;
    }
    op = clean(op, true);
    return op.empty() ? "kernel" : op;
}

std::string shapeSlug(const Task& task)
{
    if (task.benchmarkShapes.empty())
        return "scalar";
    const ShapeBinding& b = task.benchmarkShapes.front();
    std::string out;
    for (const SymbolSpec& s : task.symbols)
        if (auto it = b.values.find(s.name); it != b.values.end())
            out += (out.empty() ? "" : "-") + clean(s.name, false) + std::to_string(it->second);
    return out.empty() ? "scalar" : out;
}

std::string kernelIdPrefix(const Task& task, const std::string& gpuName)
{
    const std::string dtype = task.outputs.empty() ? "any" : std::string(dtypeName(task.outputs.front().dtype));
    return "cuda_" + opSlug(task) + "_" + gpuSlug(gpuName) + "_" + dtype + "_" + shapeSlug(task);
}

std::string kernelId(const std::string& prefix, int version) { return prefix + "_v" + std::to_string(version); }

std::optional<std::pair<std::string, int>> splitKernelId(const std::string& id)
{
    // "<prefix>_v<1..999999999>", by hand (std::regex recurses per character).
    const size_t v = id.rfind("_v");
    if (v == std::string::npos || v == 0)
        return std::nullopt;
    const std::string digits = id.substr(v + 2);
    if (digits.empty() || digits.size() > 9 || digits[0] == '0' ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::pair{id.substr(0, v), std::stoi(digits)};
}

bool isValidKernelId(const std::string& id)
{
    auto allowed = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '+' || c == '-'; };
    return !id.empty() && id.size() <= 200 && std::isalnum(static_cast<unsigned char>(id[0])) && !std::isupper(static_cast<unsigned char>(id[0])) &&
           std::all_of(id.begin(), id.end(), allowed) && splitKernelId(id).has_value();
}

} // namespace kf
