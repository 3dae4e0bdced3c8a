#pragma once
// One open kernel file: its editor, the debounce that turns keystrokes into compile requests,
// and the snapshot timer that feeds crash recovery. The main window owns the services; a tab
// only says when it is due for a compile or a snapshot.
#include <QString>
#include <QTimer>
#include <QWidget>

#include "engine/compile/Diagnostic.h"

#include <memory>
#include <vector>

namespace kf {
struct CompileResult;
}
namespace kf::ui {
class KernelEditor;
}

namespace kf::app {

/// GUI thread only; owned by the main window's tab widget.
class CandidateTab : public QWidget {
    Q_OBJECT
public:
    /// `text` is what the editor starts with (the file, or a recovered buffer).
    CandidateTab(const QString& filePath, const QString& text, int debounceMs, QWidget* parent = nullptr);

    kf::ui::KernelEditor* editor() const { return m_editor; }
    QString filePath() const { return m_filePath; }
    QString fileName() const;
    /// The task folder (the file's folder).
    QString taskDir() const;
    QString text() const;
    bool isModified() const;
    /// "optimized.cu" or "optimized.cu*".
    QString title() const;
    /// Writes the buffer atomically; on failure returns false with a sentence in `error`.
    bool save(QString* error);
    /// Replaces the buffer (e.g. the file changed on disk) without marking it modified.
    void reloadText(const QString& text);

    /// The last build delivered for this tab (of its text at `resultRevision()`), or null.
    std::shared_ptr<const kf::CompileResult> lastResult() const { return m_lastResult; }
    /// `revision`: the textRevision() the build was requested for.
    void setLastResult(std::shared_ptr<const kf::CompileResult> r, quint64 revision)
    {
        m_lastResult = std::move(r);
        m_resultRevision = revision;
    }
    /// Counts the buffer's edits: a build is of the text now when its revision equals this.
    quint64 textRevision() const { return m_textRevision; }
    /// The last build is of the text in the editor now (no edit since it was requested).
    bool resultIsCurrent() const { return m_lastResult && m_resultRevision == m_textRevision; }
    /// Asks for a compile now instead of after the debounce.
    void compileNow();

    /// Diagnostics of this candidate's last verification (compute-sanitizer's findings), made for
    /// `verifiedText`, the source the runner verified. They replace the previous verification's
    /// and are shown beside the compiler's; runDiagnostics() keeps those still valid for the text.
    void setRunDiagnostics(std::vector<kf::Diagnostic> diagnostics, const QString& verifiedText);
    /// The last verification's diagnostics that still hold for the editor's text now, at their
    /// lines there (kf::ui::followEdits).
    std::vector<kf::Diagnostic> runDiagnostics() const;
    bool hasRunDiagnostics() const { return !m_runDiagnostics.empty(); }

signals:
    /// The user stopped typing for the debounce interval (or compileNow()).
    void compileDue(kf::app::CandidateTab* tab);
    /// The buffer changed since the last snapshot and the snapshot interval passed.
    void snapshotDue(kf::app::CandidateTab* tab);
    void titleChanged(kf::app::CandidateTab* tab);

private:
    QString m_filePath;
    kf::ui::KernelEditor* m_editor = nullptr;
    QTimer m_debounce;
    QTimer m_snapshot;
    std::shared_ptr<const kf::CompileResult> m_lastResult;
    quint64 m_resultRevision = 0;
    quint64 m_textRevision = 1;
    std::vector<kf::Diagnostic> m_runDiagnostics;
    QString m_verifiedText;
};

} // namespace kf::app
