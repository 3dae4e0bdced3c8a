#pragma once
// Option values that list several things with commas: `kforge cast export --arch sm_80,sm_90`,
// `kforge verify --sanitize=memcheck,racecheck`.

#include <string>
#include <vector>

namespace kf::cli {

/// The non-empty parts of `text` between commas, in order ("a,,b," is {"a", "b"}).
std::vector<std::string> splitCommaList(const std::string& text);

} // namespace kf::cli
