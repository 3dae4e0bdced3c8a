#pragma once
// How much of the user's input an error sentence repeats. Every sentence built from input passes
// through clipEchoes once, centrally (json::fail, json::parseText and Error::message in
// engine/core/Result.cpp), so call sites quote names and values as they are.

#include <cstddef>
#include <string>
#include <string_view>

namespace kf {

/// The most characters of one quoted value (a name, a string) a message repeats.
inline constexpr std::size_t kMaxQuotedEcho = 80;
/// The most characters of one unquoted word (a JSON pointer, a token) a message repeats.
inline constexpr std::size_t kMaxWordEcho = 200;

/// `sentence` with every quoted span longer than kMaxQuotedEcho characters, and every other run
/// without white space longer than kMaxWordEcho, cut to that many characters (the last one "…")
/// followed by " (1 000 000 characters)": a message names what it is about without repeating a
/// megabyte of it. Never cuts a UTF-8 sequence; clipping twice changes nothing.
std::string clipEchoes(std::string_view sentence);

} // namespace kf
