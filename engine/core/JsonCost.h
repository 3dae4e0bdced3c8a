#pragma once
// What one json::parseText did, for the benchmark (tests/bench/bench_json.cpp) and the tests that
// keep reading a single pass (tests/tst_jsonreader.cpp).

#include "engine/core/JsonReader.h"

#include <cstddef>

namespace kf::json {

/// Every byte of the text is taken once, the builder handles one event per value, key and
/// closing bracket, and the pass over the text that turns an offset into line and column runs
/// only for a text that is refused.
struct ParseCost {
    std::size_t bytesRead = 0;
    std::size_t events = 0;
    std::size_t positionPasses = 0;
};

/// parseText, filling `cost` (which may be null).
Result<Json> parseText(std::string_view text, const std::string& origin, ParseCost* cost);

} // namespace kf::json
