#pragma once
#include <span>
#include <string_view>

namespace kf {

/// A file compiled into the binary (see cmake/KfEmbed.cmake). Lives for the whole program.
struct EmbeddedFile {
    std::string_view name;     ///< path relative to the embedded tree, e.g. "kf/reduce.cuh"
    std::string_view contents;
};

} // namespace kf
