// Where a task.json error's JSON pointer lies in the file (locateJsonPointer, the Problems row of a
// task that does not load): the input's first line is the pointer, the rest the file's text. The
// place must be inside the text (a line that exists, a column inside it or just past its end),
// and a text that nlohmann reads must place every pointer it resolves on the value's first byte.
#include "app/gui/workspace/JsonPointerPlace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

// Byte offset of 1-based (line, column) in `text`, or npos.
std::size_t offsetOf(std::string_view text, int line, int column)
{
    std::size_t start = 0;
    for (int l = 1; l < line; ++l) {
        start = text.find('\n', start);
        if (start == std::string_view::npos)
            return std::string_view::npos;
        ++start;
    }
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::size_t at = start + static_cast<std::size_t>(column) - 1;
    return at <= end ? at : std::string_view::npos;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t newline = input.find('\n');
    const std::string_view pointer = input.substr(0, newline);
    const std::string_view text = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
    const auto [line, column] = kf::app::locateJsonPointer(text, pointer);
    if (line == 0 && column == 0)
        return 0;
    const std::size_t at = offsetOf(text, line, column);
    if (line < 1 || column < 1 || at == std::string_view::npos)
        __builtin_trap();
    // A document that reads, a pointer that resolves in it: the place is where its value starts.
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || pointer.empty() || pointer.front() != '/')
        return 0;
    try {
        const nlohmann::json::json_pointer p{std::string(pointer)};
        if (!doc.contains(p))
            return 0;
        const nlohmann::json& v = doc.at(p);
        const char first = text[at];
        const bool fits = v.is_object() ? first == '{' : v.is_array() ? first == '[' : v.is_string() ? first == '"'
                        : v.is_boolean() ? (first == 't' || first == 'f') : v.is_null() ? first == 'n'
                                                                            : (first == '-' || (first >= '0' && first <= '9'));
        if (!fits)
            __builtin_trap();
    } catch (const nlohmann::json::exception&) {
        // not a pointer nlohmann accepts ("/a~2"): nothing to compare with
    }
    return 0;
}
