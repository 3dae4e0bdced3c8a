#pragma once
// Where a JSON pointer's value lies in a JSON text, for an editor to jump to: the engine's schema
// errors name a pointer, not a line. Qt-free (fuzz_json_pointer runs it on its own).

#include <string_view>
#include <utility>

namespace kf::app {

/// 1-based line and byte column of the value at JSON `pointer` in `text`, or of its deepest
/// ancestor that is there; {0, 0} when `text` is not JSON up to there. Linear in the text and
/// never recursive in its nesting, so a hostile file costs one pass.
std::pair<int, int> locateJsonPointer(std::string_view text, std::string_view pointer);

} // namespace kf::app
