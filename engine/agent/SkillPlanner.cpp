#include "engine/agent/SkillPlanner.h"

#include "engine/core/Text.h"

#include <algorithm>

namespace kf::agent {
namespace {

bool lists(const std::vector<std::string>& words, std::string_view w)
{
    return std::find(words.begin(), words.end(), w) != words.end();
}

// sm_90a matches sm_90 and the other way round.
bool archMatches(const std::vector<std::string>& archs, const std::string& arch)
{
    auto base = [](std::string a) {
        if (!a.empty() && a.back() == 'a')
            a.pop_back();
        return a;
    };
    for (const std::string& a : archs)
        if (a != "*" && base(a) == base(arch))
            return true;
    return false;
}

} // namespace

TaskTraits traitsOf(const Task& task, const std::vector<OpStep>& steps, const std::string& arch)
{
    TaskTraits t;
    t.arch = arch;
    for (const OpStep& s : steps) {
        t.ops.insert(s.op);
        if (s.op == "bmm")
            t.ops.insert("matmul");
    }
    for (const auto* list : {&task.inputs, &task.outputs})
        for (const TensorSpec& spec : *list)
            t.dtypes.insert(std::string(dtypeName(spec.dtype)));
    return t;
}

Result<SkillRequest> parseSkillRequest(std::string_view text)
{
    SkillRequest r;
    std::string_view t = text::trim(text);
    if (t.empty() || t == "auto")
        return r;
    if (t == "none") {
        r.mode = SkillRequest::Mode::None;
        return r;
    }
    r.mode = SkillRequest::Mode::Named;
    size_t i = 0;
    while (i <= t.size()) {
        size_t j = t.find(',', i);
        if (j == std::string_view::npos)
            j = t.size();
        std::string_view name = text::trim(t.substr(i, j - i));
        if (name.empty()) {
            Error e;
            e.what = "choose skills";
            e.why = "'" + std::string(t) + "' has an empty skill name";
            e.hint = "write auto, none, or names separated by commas, like online-softmax,hopper-specifics";
            return e;
        }
        if (!lists(r.names, name))
            r.names.emplace_back(name);
        i = j + 1;
    }
    return r;
}

Result<std::vector<SkillChoice>> selectSkills(const SkillLibrary& library, const TaskTraits& traits,
                                              const SkillRequest& request)
{
    std::vector<SkillChoice> out;
    if (request.mode == SkillRequest::Mode::None)
        return out;
    if (request.mode == SkillRequest::Mode::Named) {
        for (const std::string& name : request.names) {
            const Skill* s = library.find(name);
            if (!s) {
                std::string known;
                for (const Skill& k : library.skills)
                    known += (known.empty() ? "" : ", ") + k.name;
                Error e;
                e.what = "choose skills";
                e.why = "no skill is named '" + name + "'";
                e.hint = "known skills: " + known + " (kforge skills lists them; --skills-dir adds folders)";
                return e;
            }
            out.push_back({s, "asked for", 0});
        }
        return out;
    }
    std::vector<SkillChoice> scored;
    for (const Skill& s : library.skills) {
        if (s.always) {
            out.push_back({&s, "always", 0});
            continue;
        }
        int score = 0;
        std::string reason;
        auto note = [&](const std::string& why, int points) {
            score += points;
            reason += (reason.empty() ? "" : ", ") + why;
        };
        for (const std::string& op : traits.ops)
            if (lists(s.ops, op))
                note("op " + op, 3);
        for (const std::string& d : traits.dtypes)
            if (lists(s.dtypes, d))
                note("dtype " + d, 2);
        if (archMatches(s.archs, traits.arch))
            note("arch " + traits.arch, 2);
        if (score > 0)
            scored.push_back({&s, reason, score});
    }
    auto byPriority = [](const SkillChoice& a, const SkillChoice& b) {
        if (a.score != b.score)
            return a.score > b.score;
        if (a.skill->priority != b.skill->priority)
            return a.skill->priority > b.skill->priority;
        return a.skill->name < b.skill->name;
    };
    std::sort(out.begin(), out.end(), byPriority);
    if (scored.empty()) {
        for (const Skill& s : library.skills)
            if (!s.always && lists(s.ops, "*") && lists(s.dtypes, "*") && lists(s.archs, "*"))
                scored.push_back({&s, "general", 0});
    }
    std::sort(scored.begin(), scored.end(), byPriority);
    if (scored.size() > size_t(kMatchedSkills))
        scored.resize(kMatchedSkills);
    out.insert(out.end(), scored.begin(), scored.end());
    return out;
}

} // namespace kf::agent
