#include "ProgressLine.h"

#include "TextTable.h"

#include <cstdio>
#include <sys/ioctl.h>
#include <unistd.h>

namespace kf::cli {

ProgressLine::ProgressLine() : m_enabled(::isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine()
{
    clear();
}

void ProgressLine::show(const std::string& text, bool force)
{
    if (!m_enabled)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && m_shown && now - m_last < std::chrono::milliseconds(100))
        return;
    m_last = now;
    winsize ws{};
    std::size_t columns = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
    // One column short of the width: writing the last column makes some terminals wrap.
    std::string line = TextTable::truncate(text, columns > 1 ? columns - 1 : columns);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    m_shown = true;
}

void ProgressLine::clear()
{
    if (!m_enabled || !m_shown)
        return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    m_shown = false;
}

} // namespace kf::cli
