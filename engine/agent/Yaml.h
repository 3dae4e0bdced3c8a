#pragma once
// YAML in, JSON out: the one place KernelForge reads YAML (skill front matter, GPU MODE task.yml).
// The text is turned into a JSON value by yaml-cpp's event parser, so every reader afterwards is
// the strict JSON reading of engine/core/JsonReader.h, with pointers mapped back to line:column.
//
// Bounded for outside input: at most YamlLimits::maxBytes of text, maxDepth nested collections and
// maxNodes values; keys of at most 1024 characters. Refused: anchors, aliases and explicit tags
// (`!!str`, `!foo`), keys that are not plain scalars, duplicate keys and more than one document. Plain scalars are typed like YAML 1.2's
// core schema (null, booleans, integers, floats, else strings); quoted scalars are strings.

#include "engine/core/Result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kf::agent {

struct YamlLimits {
    std::size_t maxBytes = 256 * 1024;
    int maxDepth = 32;
    int maxNodes = 10000;
};

/// A parsed document and where each value started (1-based line and column).
struct YamlDocument {
    nlohmann::json value;                                        ///< null for an empty document
    std::unordered_map<std::string, std::pair<int, int>> where;  ///< JSON pointer -> (line, column)

    /// "origin:line:col" of the value at `pointer` (or its closest parent), for Error::file.
    std::string locate(const std::string& origin, const std::string& pointer) const;
};

/// Parses `text`; `origin` names it in errors ("skills/x/SKILL.md"); `firstLine` is the line
/// number of the text's first line in that file (front matter starts on line 2).
Result<YamlDocument> parseYaml(std::string_view text, const std::string& origin,
                               int firstLine = 1, const YamlLimits& limits = {});

} // namespace kf::agent
