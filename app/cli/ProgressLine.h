#pragma once
// A one-line progress indicator on stderr, redrawn in place. Silent when stderr is not a
// terminal, so logs and CI output carry no carriage-return noise.

#include <chrono>
#include <string>

namespace kf::cli {

class ProgressLine {
public:
    ProgressLine();
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    bool enabled() const { return m_enabled; }
    /// Redraws the line (at most ten times a second unless `force`).
    void show(const std::string& text, bool force = false);
    /// Erases the line, so that ordinary output starts on a clean line.
    void clear();

private:
    bool m_enabled = false;
    bool m_shown = false;
    std::chrono::steady_clock::time_point m_last;
};

} // namespace kf::cli
