#pragma once
// Promote: keeps the latest correctness and performance report of each candidate, judges the
// promotion gates for the candidate on screen (its files as saved, the registry's threshold),
// drives the Promote button and action (enabled only when every gate passes; the tooltip names
// the gate that blocks it), asks for confirmation with a summary of the evidence, and promotes
// off the UI thread. The registry judges the gates again under its lock: what lands is what passed.
#include "engine/registry/Gates.h"
#include "engine/task/Task.h"

#include "engine/protocol/RunReport.h"

#include <QFutureWatcher>
#include <QHash>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

class QWidget;

namespace kf::app {

class PromoteController : public QObject {
    Q_OBJECT
public:
    /// Asks the user; returns true to go ahead. The default shows a QMessageBox over `dialogParent`.
    using Confirm = std::function<bool(const QString& title, const QString& html)>;

    explicit PromoteController(QWidget* dialogParent, QObject* parent = nullptr);
    ~PromoteController() override;

    void setRegistryDirectory(const QString& dir);
    /// Where each candidate's latest reports are kept between sessions (one JSON file per
    /// candidate), so Promote works after a restart without running again. Empty: memory only.
    /// The gates judge hashes, so evidence for files edited since is refused, never trusted.
    void setEvidenceDirectory(const QString& dir) { m_evidenceDir = dir; }
    QString registryDirectory() const { return m_registryDir; }
    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }

    /// A report of a finished run of a candidate of the task in `taskDir`.
    void addReport(const QString& taskDir, const kf::protocol::RunReport& report);
    /// The candidate on screen (empty: none) and whether its editor has unsaved edits.
    void setCurrent(const QString& taskDir, const QString& candidateFile, bool modified);
    /// Judges the gates again (after a save, a task edit or a registry change).
    void reevaluate();

    bool canPromote() const { return m_canPromote; }
    /// Why Promote is disabled, or what it will do: the tooltip.
    QString stateText() const { return m_stateText; }
    /// The last verdict (empty before any evidence).
    const std::optional<kf::GateVerdict>& verdict() const { return m_verdict; }
    bool isBusy() const { return m_watcher.isRunning(); }

public slots:
    /// Confirms, then promotes the current candidate off the UI thread.
    void promote();

signals:
    void stateChanged(bool canPromote, const QString& tooltip);
    void promoted(const QString& id, const QString& folder);
    /// The registry refused (gates changed under us) or could not be written.
    void failed(const QString& sentence);

private:
    struct Evidence {
        std::optional<kf::protocol::RunReport> correctness;
        std::optional<kf::protocol::RunReport> performance;
    };
    struct Outcome {
        bool ok = false;
        QString id, folder, sentence;
    };
    void setState(bool can, const QString& text);
    QString summaryHtml() const;
    QString evidenceFile(const QString& key) const;
    void saveEvidence(const QString& key) const;
    void loadEvidence(const QString& key);

    QWidget* m_dialogParent = nullptr;
    QString m_registryDir;
    QString m_evidenceDir;
    Confirm m_confirm;
    QHash<QString, Evidence> m_evidence;   // taskDir + '/' + candidate file
    QString m_taskDir, m_candidate;
    bool m_modified = false;
    bool m_canPromote = false;
    QString m_stateText;
    std::optional<kf::GateVerdict> m_verdict;
    std::optional<kf::Task> m_task;       // the task the verdict was judged on
    QFutureWatcher<Outcome> m_watcher;
};

} // namespace kf::app
