#pragma once
// The embedded prelude headers (resources/prelude/kf/*.cuh), generated at build time.
#include "resources/Embedded.h"

#include <span>

namespace kf::prelude {
/// Every prelude header with its include name ("kf/prelude.cuh", "kf/vec.cuh", ...).
std::span<const kf::EmbeddedFile> files();
} // namespace kf::prelude
