#pragma once
// The editor's word lists (resources/lexer/*.txt), generated at build time.
#include "resources/Embedded.h"

#include <span>

namespace kf::lexer {
/// Every word list with its file name ("cuda_keywords.txt", ...).
std::span<const kf::EmbeddedFile> files();
} // namespace kf::lexer
