#include "engine/agent/CandidateAdd.h"

#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/core/Text.h"
#include "engine/task/Task.h"
#include "engine/task/TaskEdit.h"

#include <system_error>

namespace kf::agent {
namespace {

namespace fs = std::filesystem;
constexpr const char* kWhat = "add the candidate";

Error fail(std::string why, std::string file, std::string hint = {}, std::string pointer = {})
{
    return Error::inFile(std::move(file), std::move(pointer), kWhat, std::move(why), std::move(hint));
}

struct Line {
    std::string_view text;
    int number;
    int offset = 0;   // characters of the source line before `text`
};

// The lines of the first comment at the top of the file, decoration removed.
std::vector<Line> firstComment(std::string_view s)
{
    std::vector<Line> lines;
    int number = 1;
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) {
        if (s[i] == '\n')
            ++number;
        ++i;
    }
    auto stripStar = [](std::string_view l) {
        std::string_view t = text::trim(l);
        if (!t.empty() && t.front() == '*' && (t.size() == 1 || t[1] != '/'))
            return t.substr(1);
        return l;
    };
    auto offsetOf = [](std::string_view part, std::string_view whole) { return int(part.data() - whole.data()); };
    if (s.substr(i, 2) == "/*") {
        size_t end = s.find("*/", i + 2);
        std::string_view body = s.substr(i + 2, end == std::string_view::npos ? std::string_view::npos : end - i - 2);
        size_t pos = 0;
        while (pos <= body.size()) {
            size_t nl = body.find('\n', pos);
            std::string_view l = body.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
            const std::string_view stripped = stripStar(l);
            // The first line of the block starts after "/*".
            lines.push_back({stripped, number++, offsetOf(stripped, l) + (pos == 0 ? int(i - s.rfind('\n', i) - 1) + 2 : 0)});
            if (nl == std::string_view::npos)
                break;
            pos = nl + 1;
        }
    } else {
        while (i < s.size()) {
            size_t nl = s.find('\n', i);
            std::string_view l = s.substr(i, nl == std::string_view::npos ? std::string_view::npos : nl - i);
            std::string_view t = text::trim(l);
            if (t.substr(0, 2) != "//")
                break;
            lines.push_back({t.substr(2), number++, offsetOf(t.substr(2), l)});
            if (nl == std::string_view::npos)
                break;
            i = nl + 1;
        }
    }
    return lines;
}

// Maps parseTask's pointer into the appended entry ("/candidates/3/launches/0/grid") onto the plan.
Error planError(Error e, const std::string& candidatesPointer, const std::string& planOrigin)
{
    if (e.pointer.rfind(candidatesPointer, 0) == 0) {
        e.pointer = e.pointer.substr(candidatesPointer.size());
        e.file = planOrigin;
        if (e.pointer.empty())
            e.pointer = "/";
    }
    e.what = kWhat;
    return e;
}

} // namespace

Result<std::optional<FencedPlan>> fencedPlan(std::string_view source, const std::string& file)
{
    std::optional<FencedPlan> found;
    bool inFence = false;
    FencedPlan current;
    int openedAt = 0;
    for (const Line& l : firstComment(source)) {
        std::string_view t = text::trim(l.text);
        if (!inFence && (t == "```json" || t == "``` json")) {
            if (found)
                return fail("the first comment holds two ```json fences (lines " + std::to_string(found->line - 1) + " and "
                                + std::to_string(l.number) + ")",
                            file + ":" + std::to_string(l.number), "keep one launch plan");
            inFence = true;
            openedAt = l.number;
            current = {{}, l.number + 1};
            continue;
        }
        if (inFence && t == "```") {
            inFence = false;
            found = current;
            continue;
        }
        if (inFence) {
            current.json += std::string(l.text) + "\n";
            current.offsets.push_back(l.offset);
        }
    }
    if (inFence)
        return fail("the ```json fence opened on line " + std::to_string(openedAt) + " is not closed",
                    file + ":" + std::to_string(openedAt), "end the plan with a line of three backticks");
    return found;
}

Result<nlohmann::ordered_json> parsePlanJson(std::string_view text, const std::string& origin, int firstLine,
                                             const std::vector<int>& offsets)
{
    if (text.size() > kMaxPlanBytes)
        return fail("the launch plan is larger than 1 MiB", origin);
    // Copying and printing a JSON value recurse once per level: bound the nesting first.
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxPlanDepth)
                return fail("the launch plan is nested deeper than " + std::to_string(kMaxPlanDepth) + " levels", origin);
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    try {
        return nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // Byte offset -> line and column.
        size_t offset = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        int line = firstLine, column = 1;
        for (size_t i = 0; i < offset; ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        if (size_t(line - firstLine) < offsets.size())
            column += offsets[size_t(line - firstLine)];
        std::string why = e.what();
        if (auto at = why.find("syntax error"); at != std::string::npos)
            why = why.substr(at);
        return fail("the launch plan is not valid JSON: " + why, origin + ":" + std::to_string(line) + ":" + std::to_string(column));
    }
}

namespace {

/// The candidate's source: a regular file of at most kMaxSourceBytes that sourceProblem() accepts.
Result<std::string> readSource(const fs::path& file)
{
    std::error_code ec;
    const std::string sourceName = file.string();
    if (!fs::is_regular_file(file, ec))
        return fail("no such file", sourceName, "give the .cu file the agent wrote");
    if (fs::file_size(file, ec) > kMaxSourceBytes)
        return fail("the file is larger than " + std::to_string(kMaxSourceBytes >> 20) + " MiB", sourceName);
    auto source = readFileBytes(file, kMaxSourceBytes);
    if (!source)
        return source.error();
    if (auto problem = sourceProblem(*source, sourceName))
        return fail(problem->message, sourceName + ":" + std::to_string(problem->line) + ":" + std::to_string(problem->column));
    return std::move(*source);
}

/// The launch plan: a file or a fence in the source, exactly one; `planOrigin` names where it is.
Result<nlohmann::ordered_json> readPlan(const AddCandidateRequest& r, const std::string& source, const std::string& sourceName,
                                        std::string& planOrigin)
{
    std::error_code ec;
    auto fence = fencedPlan(source, sourceName);
    if (!fence)
        return fence.error();
    Result<nlohmann::ordered_json> plan = Error{};
    if (!r.planFile.empty()) {
        planOrigin = r.planFile.string();
        if (*fence)
            return fail("the launch plan is given twice: --plan " + planOrigin + " and a ```json fence on line "
                            + std::to_string((*fence)->line - 1),
                        sourceName, "keep one: delete the fence or leave out --plan");
        if (!fs::is_regular_file(r.planFile, ec))
            return fail("no such file", planOrigin, "give the plan's JSON file, or put the plan in a ```json fence in the "
                                                    "source's first comment");
        if (fs::file_size(r.planFile, ec) > kMaxPlanBytes)
            return fail("the plan is larger than 1 MiB", planOrigin);
        auto text = readFileBytes(r.planFile, kMaxPlanBytes);
        if (!text)
            return text.error();
        plan = parsePlanJson(*text, planOrigin);
    } else if (*fence) {
        planOrigin = sourceName;
        plan = parsePlanJson((*fence)->json, planOrigin, (*fence)->line, (*fence)->offsets);
    } else {
        return fail("no launch plan: give --plan plan.json, or put the plan in a ```json fence in the source's first comment",
                    sourceName, "docs/agents.md shows both forms");
    }
    if (!plan)
        return plan.error();
    if (!plan->is_object())
        return fail("the launch plan must be a JSON object with \"launches\", not " + std::string(plan->type_name()),
                    planOrigin, {}, "/");
    return plan;
}

/// The plan as the task's entry for `out.name`, with the description asked for; a note in `out`
/// when the plan named another file.
nlohmann::ordered_json namedEntry(const nlohmann::ordered_json& plan, const AddCandidateRequest& r, AddedCandidate& out)
{
    if (plan.contains("file") && plan["file"] != out.name)
        out.notes.push_back("the plan's \"file\" (" + plan["file"].dump() + ") was replaced by " + out.name);
    nlohmann::ordered_json named = candidateEntry(out.name, plan);
    if (!named.contains("description") || !named["description"].is_string() || named["description"].get<std::string>().empty())
        named["description"] = r.description.empty() ? std::string("added by kforge candidate add") : r.description;
    else if (!r.description.empty())
        named["description"] = r.description;
    return named;
}

} // namespace

Result<AddedCandidate> addCandidate(const AddCandidateRequest& r)
{
    std::error_code ec;
    const fs::path jsonPath = r.taskDir / "task.json";
    auto task = loadTask(r.taskDir);
    if (!task)
        return task.error();

    const std::string sourceName = r.source.string();
    auto source = readSource(r.source);
    if (!source)
        return source.error();

    std::string planOrigin;
    auto plan = readPlan(r, *source, sourceName, planOrigin);
    if (!plan)
        return plan.error();

    // The name.
    AddedCandidate out;
    out.name = r.name.empty() ? r.source.filename().string() : r.name;
    if (out.name.size() < 3 || out.name.substr(out.name.size() - 3) != ".cu")
        out.name += ".cu";
    if (!isPlainCandidateName(out.name))
        return fail("\"" + out.name + "\" is not a plain file name", sourceName,
                    "pass --name with letters, digits, '_', '-' and '.', ending in .cu");
    if (task->findCandidate(out.name))
        return fail("the task already has a candidate " + out.name, jsonPath.string(),
                    "choose another name with --name", "/candidates");
    const fs::path target = r.taskDir / out.name;
    const bool inPlace = fs::exists(target, ec) && fs::equivalent(target, r.source, ec);
    if (!inPlace && fs::exists(target, ec))
        return fail(out.name + " already exists in the task folder", target.string(), "choose another name with --name");

    // The entry, checked in memory against the whole task.
    nlohmann::ordered_json named = namedEntry(*plan, r, out);
    auto taskJson = readFileBytes(jsonPath, json::kMaxJsonFileBytes);
    if (!taskJson)
        return taskJson.error();
    nlohmann::ordered_json whole = nlohmann::ordered_json::parse(*taskJson, nullptr, false);
    if (whole.is_discarded() || !whole.is_object())
        return fail("task.json is not a JSON object", jsonPath.string());
    if (!whole.contains("candidates") || !whole["candidates"].is_array())
        whole["candidates"] = nlohmann::ordered_json::array();
    const std::string prefix = "/candidates/" + std::to_string(whole["candidates"].size());
    whole["candidates"].push_back(named);
    auto checked = parseTask(nlohmann::json::parse(whole.dump()), jsonPath.string(), {});
    if (!checked)
        return planError(checked.error(), prefix, planOrigin);
    const Candidate* candidate = nullptr;
    for (const Candidate& c : checked->candidates)
        if (c.file == out.name)
            candidate = &c;
    checked->directory = task->directory;

    // Compile for every architecture before anything is written.
    if (r.compile) {
        if (auto v = nvrtcVersion(); !v) {
            out.notes.push_back("not compiled: " + v.error().why);
        } else {
            auto built = compileForEveryArchitecture(*checked, *candidate, *source, sourceName, planOrigin, nullptr, r.cancelled);
            if (!built)
                return built.error().why == "cancelled" ? fail("cancelled", sourceName) : built.error();
            out.diagnostics = std::move(built->diagnostics);
            out.compiledFor = std::move(built->compiledFor);
            if (!built->success)
                return out;   // added == false: the diagnostics say why
        }
    }

    // Write: the file (unless it is already there) and the entry.
    auto written = inPlace ? appendCandidateInPlace(r.taskDir, out.name, named, kWhat, "choose another name with --name")
                           : appendCandidate(r.taskDir, out.name, *source, named, kWhat, "choose another name with --name");
    if (!written)
        return planError(written.error(), prefix, planOrigin);
    out.added = true;
    out.file = *written;
    out.entry = std::move(named);
    out.findings = scanSource(*source);
    return out;
}

} // namespace kf::agent
