#pragma once
// The window's status bar: the GPU runner's state (or "no GPU: compile-only mode"), the last
// compile of the current tab, and the cursor position.
#include <QStatusBar>

class QLabel;

namespace kf::app {

class StatusBar : public QStatusBar {
    Q_OBJECT
public:
    explicit StatusBar(QWidget* parent = nullptr);
    /// `kind` "ok", "warn" or "error" colours the runner text; `detail` is its tooltip.
    void setRunner(const QString& text, const QString& kind, const QString& detail);
    /// "compiled in 212 ms (sm_90) · 2 errors", "compiling…".
    void setCompile(const QString& text);
    void setCursor(int line, int column);
    QString runnerText() const;
    QString compileText() const;

private:
    QLabel* m_runner = nullptr;
    QLabel* m_compile = nullptr;
    QLabel* m_cursor = nullptr;
};

} // namespace kf::app
