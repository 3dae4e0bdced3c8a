#pragma once
// Word lists behind the CUDA lexer and the editor's completion: the embedded lexer files
// (resources/lexer/*.txt) and the names our prelude headers declare.

#include <QStringList>

#include <string_view>

namespace kf::ui {

/// Words of one embedded lexer file ("cuda_keywords.txt"), in file order, comments and blank
/// lines skipped. Empty when no such file was embedded. Any thread.
QStringList lexerWords(std::string_view fileName);

/// Public names declared by the embedded prelude headers (functions, structs and templates of
/// namespace kf, outside kf::detail), each once, sorted. Any thread.
QStringList preludeIdentifiers();

} // namespace kf::ui
