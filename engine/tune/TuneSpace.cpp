#include "engine/tune/TuneSpace.h"

#include <algorithm>

namespace kf::tune {

std::string Point::label() const
{
    std::string out;
    for (const auto& [name, value] : values)
        out += (out.empty() ? "" : " ") + name + "=" + value;
    return out;
}

nlohmann::json Point::toJson() const
{
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, value] : values)
        j[name] = macroValueJson(value);
    return j;
}

Point pointOf(const Candidate& candidate)
{
    Point p;
    for (const auto& [name, values] : candidate.tune.params) {
        const std::string* v = candidate.define(name);
        p.values.emplace_back(name, v ? *v : std::string());
    }
    return p;
}

Candidate withPoint(const Candidate& candidate, const Point& point)
{
    Candidate c = candidate;
    for (const auto& [name, value] : point.values) {
        auto it = std::find_if(c.defines.begin(), c.defines.end(), [&](const auto& d) { return d.first == name; });
        if (it != c.defines.end())
            it->second = value;
        else
            c.defines.emplace_back(name, value);
    }
    return c;
}

Task taskWithPoint(const Task& task, const std::string& file, const Point& point)
{
    Task t = task;
    for (Candidate& c : t.candidates)
        if (c.file == file)
            c = withPoint(c, point);
    return t;
}

namespace {

std::string taskFile(const Task& task)
{
    return (task.directory / "task.json").string();
}

std::string candidatePointer(const Task& task, const Candidate& candidate)
{
    for (size_t i = 0; i < task.candidates.size(); ++i)
        if (task.candidates[i].file == candidate.file)
            return "/candidates/" + std::to_string(i);
    return "/candidates";
}

/// Whether `point` meets every condition; an Error names the condition that cannot be evaluated.
Result<bool> admitted(const Task& task, const Candidate& candidate, const Point& point)
{
    const Env env = task.environment(withPoint(candidate, point), ShapeBinding{});
    for (const Expr& w : candidate.tune.where) {
        auto v = w.eval(env);
        if (!v)
            return Error::inFile(taskFile(task), candidatePointer(task, candidate) + "/tune/where",
                                 "evaluate the tune condition \"" + w.text() + "\" at " + point.label(), v.error().why,
                                 "a condition may name the task's parameters and the candidate's numeric defines");
        if (v->asDouble() == 0.0)
            return false;
    }
    return true;
}

} // namespace

Result<Space> enumerate(const Task& task, const Candidate& candidate, std::size_t limit)
{
    const auto& params = candidate.tune.params;
    if (params.empty())
        return Error::inFile(taskFile(task), candidatePointer(task, candidate), "tune " + candidate.file, "the candidate has no \"tune\" block",
                             "add \"tune\": {\"space\": {\"BLOCK\": [128, 256, 512]}} naming some of its defines");
    Space space;
    std::vector<Point> all;
    std::vector<std::size_t> index(params.size(), 0);
    const Point own = pointOf(candidate);
    for (bool more = true; more;) {
        Point p;
        for (size_t i = 0; i < params.size(); ++i)
            p.values.emplace_back(params[i].first, params[i].second[index[i]]);
        ++space.combinations;
        auto ok = admitted(task, candidate, p);
        if (!ok)
            return ok.error();
        if (*ok)
            (p == own ? all.insert(all.begin(), p) : all.insert(all.end(), p));
        else
            ++space.excluded;
        more = false;
        for (size_t i = params.size(); i-- > 0;) {
            if (++index[i] < params[i].second.size()) {
                more = true;
                break;
            }
            index[i] = 0;
        }
        if (space.combinations > 1'000'000)
            return Error::inFile(taskFile(task), candidatePointer(task, candidate), "tune " + candidate.file, "the space has more than a million combinations",
                                 "list fewer values, or add \"where\" conditions that leave most of them out");
    }
    if (all.empty())
        return Error::inFile(taskFile(task), candidatePointer(task, candidate), "tune " + candidate.file,
                             "no combination of the space meets every \"where\" condition", "relax a condition or list other values");
    if (limit > 0 && all.size() > limit) {
        // An even sample, the candidate's own point kept first.
        std::vector<Point> kept;
        const double step = double(all.size()) / double(limit);
        for (std::size_t k = 0; k < limit; ++k)
            kept.push_back(all[std::min(all.size() - 1, std::size_t(k * step))]);
        space.sampledOut = std::int64_t(all.size() - kept.size());
        all = std::move(kept);
    }
    space.points = std::move(all);
    return space;
}

} // namespace kf::tune
