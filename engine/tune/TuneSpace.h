#pragma once
// A candidate's search space (docs/tune.md): the combinations of the values its "tune" block
// lists for some of its defines, filtered by the block's "where" conditions, and the task as the
// runner gets it for one combination (its launch plan evaluates with the point's values).
// Qt-free.

#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kf::tune {

/// One combination: define -> value, in the space's order.
struct Point {
    std::vector<std::pair<std::string, std::string>> values;

    std::string label() const;              ///< "BLOCK=256 VEC=4"
    nlohmann::json toJson() const;          ///< {"BLOCK": 256, "VEC": 4}: numbers stay numbers
    bool operator==(const Point& o) const { return values == o.values; }
};

struct Space {
    std::vector<Point> points;              ///< the candidate's own defines first, when they are a point of the space
    std::int64_t combinations = 0;          ///< before "where"
    std::int64_t excluded = 0;              ///< left out by "where"
    std::int64_t sampledOut = 0;            ///< left out to stay within the limit (an even sample of the rest)
};

/// Every combination of `candidate.tune` that meets its conditions, at most `limit` of them. The
/// first point is the candidate as task.json has it when its defines are in the space. An Error
/// when the candidate has no "tune" block, a condition cannot be evaluated, or nothing is left.
Result<Space> enumerate(const Task& task, const Candidate& candidate, std::size_t limit = 4096);

/// `candidate` with the point's values for its defines.
Candidate withPoint(const Candidate& candidate, const Point& point);

/// `task` whose candidate `file` has the point's values: what a point is compiled from and what
/// the runner is sent, so the report's task hash names the point's build.
Task taskWithPoint(const Task& task, const std::string& file, const Point& point);

/// The point `candidate`'s defines are, for the names of its space.
Point pointOf(const Candidate& candidate);

} // namespace kf::tune
