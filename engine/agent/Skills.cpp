#include "engine/agent/Skills.h"

#include "engine/agent/Yaml.h"
#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/core/Text.h"
#include "resources/agent.h"

#include <algorithm>
#include <system_error>

namespace kf::agent {
namespace {

namespace fs = std::filesystem;
using kf::json::Json;

bool validName(std::string_view name)
{
    if (name.empty() || name.size() > 64 || name.front() == '-' || name.back() == '-')
        return false;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && name[i + 1] != '-');
        if (!ok)
            return false;
    }
    return true;
}

std::vector<std::string> words(const std::string& s)
{
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == ',' || s[i] == '\t'))
            ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != ',' && s[j] != '\t')
            ++j;
        if (j > i)
            out.emplace_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

// Splits "---\n<yaml>\n---\n<body>"; false when there is no front matter.
struct Split {
    std::string_view yaml, body;
    int closingLine = 0;
    std::string problem;
};

Split splitFrontMatter(std::string_view text)
{
    Split s;
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    auto lineEnd = [&](size_t from) { size_t e = text.find('\n', from); return e == std::string_view::npos ? text.size() : e; };
    auto lineAt = [&](size_t from, size_t end) {
        std::string_view l = text.substr(from, end - from);
        if (!l.empty() && l.back() == '\r')
            l.remove_suffix(1);
        return l;
    };
    size_t end = lineEnd(0);
    if (text::trim(lineAt(0, end)) != "---") {
        s.problem = "no front matter: the file must start with a '---' line, the YAML keys, and another '---' line";
        return s;
    }
    size_t yamlStart = std::min(end + 1, text.size());
    int line = 2;
    for (size_t pos = yamlStart; pos < text.size(); ++line) {
        size_t e = lineEnd(pos);
        if (lineAt(pos, e) == "---") {
            s.yaml = text.substr(yamlStart, pos - yamlStart);
            s.body = text.substr(std::min(e + 1, text.size()));
            s.closingLine = line;
            return s;
        }
        pos = e + 1;
    }
    s.problem = "the front matter is not closed: add a '---' line after its last key";
    return s;
}

std::string readStringMap(json::Object& meta, std::string_view key, std::map<std::string, std::string>& all)
{
    const Json* v = meta.optional(key);
    if (!v)
        return {};
    return all[std::string(key)] = json::asString(*v, meta.at(key));
}

Error skillError(const std::string& origin, std::string why, std::string pointer = {}, std::string file = {})
{
    Error e;
    e.what = "read skill";
    e.file = file.empty() ? origin : std::move(file);
    e.pointer = std::move(pointer);
    e.why = std::move(why);
    return e;
}

} // namespace

const Skill* SkillLibrary::find(std::string_view name) const
{
    for (const Skill& s : skills)
        if (s.name == name)
            return &s;
    return nullptr;
}

Result<Skill> parseSkill(std::string_view text, const std::string& origin, std::string_view folderName)
{
    if (text.size() > kMaxSkillBytes)
        return skillError(origin, "the file is " + std::to_string(text.size()) + " bytes; a SKILL.md may have at most "
                                      + std::to_string(kMaxSkillBytes));
    Split split = splitFrontMatter(text);
    if (!split.problem.empty())
        return skillError(origin, split.problem);
    auto doc = parseYaml(split.yaml, origin, 2);
    if (!doc) {
        Error e = doc.error();
        e.what = "read skill";
        return e;
    }
    const Json& root = doc->value;
    Skill skill;
    skill.origin = origin;
    try {
        if (!root.is_object())
            json::fail("", "the front matter must be a mapping of keys (name, description, metadata), not "
                               + json::describe(root));
        json::Object o(root, "");
        skill.name = o.string("name");
        if (!validName(skill.name))
            json::fail(o.at("name"), "'" + skill.name + "' is not a skill name: use 1-64 lower-case letters, digits "
                                     "and single hyphens, like 'online-softmax'");
        if (!folderName.empty() && skill.name != folderName)
            json::fail(o.at("name"), "the name '" + skill.name + "' differs from its folder '"
                                         + std::string(folderName) + "'; rename one so they match");
        skill.description = o.string("description");
        if (text::trim(skill.description).empty() || skill.description.size() > 1024)
            json::fail(o.at("description"), "the description must have 1 to 1024 characters (it has "
                                                + std::to_string(skill.description.size()) + ")");
        for (const char* key : {"license", "compatibility", "allowed-tools"})
            if (const Json* v = o.optional(key))
                json::asString(*v, o.at(key));
        if (const Json* m = o.optional("metadata")) {
            if (!m->is_object())
                json::fail(o.at("metadata"), "metadata must be a mapping of strings, not " + json::describe(*m));
            for (auto it = m->begin(); it != m->end(); ++it)
                if (!it.value().is_string())
                    json::fail(json::child(o.at("metadata"), it.key()),
                               "metadata values must be strings; quote it, like \"" + it.value().dump() + "\"");
            json::Object meta(*m, o.at("metadata"));
            skill.tags = words(readStringMap(meta, "tags", skill.metadata));
            skill.ops = words(readStringMap(meta, "ops", skill.metadata));
            skill.dtypes = words(readStringMap(meta, "dtypes", skill.metadata));
            skill.archs = words(readStringMap(meta, "archs", skill.metadata));
            std::string always = readStringMap(meta, "always", skill.metadata);
            if (!always.empty() && always != "true" && always != "false")
                json::fail(meta.at("always"), "always must be \"true\" or \"false\"");
            skill.always = always == "true";
            std::string priority = readStringMap(meta, "priority", skill.metadata);
            if (!priority.empty()) {
                std::int64_t p = -1;
                auto parsed = Json::parse(priority, nullptr, false);
                if (parsed.is_number_integer())
                    p = parsed.get<std::int64_t>();
                if (p < 0 || p > 1000)
                    json::fail(meta.at("priority"), "priority must be an integer from 0 to 1000 in quotes, like \"50\"");
                skill.priority = int(p);
            }
            for (auto it = m->begin(); it != m->end(); ++it)   // other keys are kept, not read
                skill.metadata.emplace(it.key(), it.value().get<std::string>());
        }
        o.finish();
    } catch (const json::SchemaError& e) {
        return skillError(origin, e.message, e.pointer, doc->locate(origin, e.pointer));
    }
    skill.body = std::string(text::trim(split.body));
    if (skill.body.empty())
        return skillError(origin, "the skill has no body: write its Markdown after the closing '---' line",
                          {}, origin + ":" + std::to_string(split.closingLine + 1) + ":1");
    if (skill.ops.empty())
        skill.ops = {"*"};
    if (skill.dtypes.empty())
        skill.dtypes = {"*"};
    if (skill.archs.empty())
        skill.archs = {"*"};
    return skill;
}

namespace {

/// Adds `s` to `lib`, replacing a skill of the same name (a later folder overrides).
void addSkill(SkillLibrary& lib, Skill s)
{
    for (Skill& existing : lib.skills)
        if (existing.name == s.name) {
            // A replacement that says nothing about when it applies keeps the planner keys
            // of the skill it replaces (a team's own text for the same playbook).
            static const char* const planner[] = {"ops", "dtypes", "archs", "always", "priority"};
            if (std::none_of(std::begin(planner), std::end(planner), [&](const char* k) { return s.metadata.count(k); })) {
                s.ops = existing.ops;
                s.dtypes = existing.dtypes;
                s.archs = existing.archs;
                s.always = existing.always;
                s.priority = existing.priority;
            }
            s.overrides = existing.origin;
            existing = std::move(s);
            return;
        }
    lib.skills.push_back(std::move(s));
}

/// The skill in `folder`/SKILL.md, or a problem in `lib` when it cannot be read.
void readSkillFolder(SkillLibrary& lib, const fs::path& folder)
{
    fs::path file = folder / "SKILL.md";
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (ec || !fs::is_regular_file(file, ec)) {
        lib.problems.push_back(skillError(file.string(), "not a readable regular file"));
        return;
    }
    if (size > kMaxSkillBytes) {
        lib.problems.push_back(skillError(file.string(), "the file is " + std::to_string(size)
                                                              + " bytes; a SKILL.md may have at most "
                                                              + std::to_string(kMaxSkillBytes)));
        return;
    }
    auto bytes = readFileBytes(file);
    if (!bytes) {
        lib.problems.push_back(bytes.error());
        return;
    }
    auto s = parseSkill(*bytes, file.string(), folder.filename().string());
    if (s)
        addSkill(lib, std::move(s).value());
    else
        lib.problems.push_back(s.error());
}

} // namespace

SkillLibrary loadSkills(const std::vector<std::filesystem::path>& extraDirs)
{
    SkillLibrary lib;
    for (const EmbeddedFile& f : agentres::files()) {
        std::string_view name = f.name;
        if (!text::startsWith(name, "skills/") || name.size() < 16 || name.substr(name.size() - 9) != "/SKILL.md")
            continue;
        std::string folder(name.substr(7, name.size() - 7 - 9));
        auto s = parseSkill(f.contents, "resources/" + std::string(name) + " (built in)", folder);
        if (s)
            addSkill(lib, std::move(s).value());
        else
            lib.problems.push_back(s.error());
    }
    for (const fs::path& dir : extraDirs) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            lib.problems.push_back(skillError(dir.string(), "no such folder; --skills-dir names a folder of "
                                                            "<name>/SKILL.md skills"));
            continue;
        }
        if (fs::exists(dir / "SKILL.md", ec)) {
            fs::path one = fs::absolute(dir, ec).lexically_normal();
            if (one.filename().empty())
                one = one.parent_path();
            readSkillFolder(lib, one);
            continue;
        }
        std::vector<fs::path> folders;
        const fs::path root = fs::absolute(dir, ec).lexically_normal();
        for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
            if (it->is_directory(ec) && fs::exists(it->path() / "SKILL.md", ec))
                folders.push_back(it->path());
        std::sort(folders.begin(), folders.end());
        if (folders.empty())
            lib.problems.push_back(skillError(dir.string(), "the folder holds no <name>/SKILL.md"));
        for (const fs::path& f : folders)
            readSkillFolder(lib, f);
    }
    std::sort(lib.skills.begin(), lib.skills.end(), [](const Skill& a, const Skill& b) { return a.name < b.name; });
    return lib;
}

} // namespace kf::agent
