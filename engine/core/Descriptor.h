#pragma once
// Plain file-descriptor output, for code that writes with system calls rather than streams (the
// runner's file store and protocol channel, the client's dump receiver).

#include <string_view>

namespace kf {

/// Writes all of `bytes` to `fd`, going on after a signal interrupts a write; false when a write
/// fails or writes nothing (errno says why when it failed).
bool writeAll(int fd, std::string_view bytes);

} // namespace kf
