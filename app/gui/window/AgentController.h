#pragma once
// The workbench's face of the agent loop (docs/agents.md): Edit ▸ Copy Agent Prompt renders
// `kforge prompt` for the current task onto the clipboard, and File ▸ Add Candidate… takes back
// a kernel an agent wrote (`kforge candidate add`). Both run off the UI thread; adding compiles
// for every architecture of the task, with a progress dialog and Cancel.

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>

class QProgressDialog;
class QWidget;

namespace kf::app {

class Settings;

class AgentController : public QObject {
    Q_OBJECT

public:
    /// `window` parents the dialogs; `settings` gives the extra skill folders.
    AgentController(Settings* settings, QWidget* window);
    ~AgentController() override;

    /// Renders the task's prompt (skills chosen automatically) and puts it on the clipboard.
    /// Emits promptCopied() or failed().
    void copyPrompt(const QString& taskDir);
    /// Asks for the .cu file, and for a plan file unless the source has a ```json fence, then add().
    void addCandidateInteractive(const QString& taskDir);
    /// Checks, compiles and lists `source` with `planFile` (empty: the fence). Emits
    /// candidateAdded() or failed(); a source that does not compile fails with its diagnostics.
    void addCandidate(const QString& taskDir, const QString& source, const QString& planFile);
    bool busy() const { return m_busy; }
    /// The last prompt copied (for tests and the status bar).
    QString lastPrompt() const { return m_lastPrompt; }

signals:
    /// "Agent prompt for softmax_fp32 copied: 12 sections, 31 KB; skills: …".
    void promptCopied(const QString& summary);
    /// `warnings`: the static scan's lines and the engine's notes.
    void candidateAdded(const QString& taskDir, const QString& file, const QStringList& warnings);
    void failed(const QString& title, const QString& message);

private:
    Settings* m_settings = nullptr;
    QWidget* m_window = nullptr;
    bool m_busy = false;
    QString m_lastPrompt;
    QPointer<QProgressDialog> m_progress;
    std::shared_ptr<std::atomic_bool> m_cancel;
};

} // namespace kf::app
