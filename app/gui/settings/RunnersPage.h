#pragma once
// Settings ▸ Runners: the runner endpoints of runners.json (docs/runners.md), the same file
// `kforge --runner-endpoint` reads. A table of endpoints (name, kind, where, shared files, the last
// check), Add / Edit / Remove through EndpointDialog, the file's default endpoint and the one the
// workbench runs on, and Check: the selected endpoint's runner is started off the UI thread
// (cancellable) and its host, GPU, UUID, compute-sanitizer and round trip are shown, or why it did
// not start. Every change is judged by the engine's reader (parseRunnersConfig) and written with
// writeRunnersConfig (atomic) on OK; a file that does not read is shown with its JSON pointer and
// never overwritten.

#include "app/gui/settings/ConfigFilePage.h"
#include "app/gui/settings/EndpointCheck.h"
#include "engine/runner/RunnersConfig.h"

#include <QFutureWatcher>
#include <QHash>
#include <QString>

#include <memory>

class QComboBox;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QTableWidget;

namespace kf::app {

/// GUI thread.
class RunnersPage : public ConfigFilePage {
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, WhereColumn, FilesColumn, CheckColumn, ColumnCount };

    /// `file` empty: runnersConfigPath(). Loads it at once.
    explicit RunnersPage(const QString& file = {}, QWidget* parent = nullptr);
    ~RunnersPage() override;

    /// Reads the file into the table. False when it does not read: the page is disabled,
    /// loadError() says why (with the file and the JSON pointer), and save() leaves the file alone.
    bool load();
    /// The configuration as edited (what save() writes, with writeRunnersConfig).
    const kf::RunnersConfig& config() const { return m_config; }

    /// Adds `endpoint` after the others; false with the reader's sentence in `error` when it may
    /// not be added (a name used twice, an ssh option that asks for a terminal…).
    bool addEndpoint(const kf::Endpoint& endpoint, QString* error = nullptr);
    /// Replaces the endpoint of `row`, renaming it in the default and the pools; false as above.
    bool setEndpoint(int row, const kf::Endpoint& endpoint, QString* error = nullptr);
    /// Removes the endpoint of `row`, and its name from the pools (the default falls back to "local").
    void removeEndpoint(int row);
    /// Whether the page may edit `row` ("local" may be edited but not removed; the endpoints a
    /// "gpus" entry makes are edited in the file), with the reason when not.
    bool canEdit(int row, QString* why = nullptr) const;
    bool canRemove(int row, QString* why = nullptr) const;

    /// runners.json's "default".
    QString defaultEndpoint() const;
    void setDefaultEndpoint(const QString& name);
    /// The endpoint the workbench runs on (Settings ▸ runner/endpoint): empty for the file's default.
    QString workbenchEndpoint() const;
    void setWorkbenchEndpoint(const QString& name);
    /// The local runner program checks start ("" for the default), from the General page.
    void setLocalRunner(const QString& path) { m_localRunner = path; }

    /// Starts the runner of `row` off the UI thread (one check at a time); checkFinished follows.
    bool check(int row);
    void cancelCheck();
    bool isChecking() const;
    /// The last check of `endpoint`, shown in the Last check column and under the table.
    const EndpointCheck* lastCheck(const QString& endpoint) const;

    // Parts, for tests and screenshots.
    QTableWidget* table() const { return m_table; }
    QComboBox* defaultPicker() const { return m_default; }
    QComboBox* workbenchPicker() const { return m_workbench; }
    QPushButton* checkButton() const { return m_check; }
    QLabel* checkLabel() const { return m_checkText; }
    QLabel* problemLabel() const { return m_problem; }

signals:
    void checkFinished(const kf::app::EndpointCheck& result);

protected:
    QString firstProblem() const override { return judge(m_config); }
    kf::Result<void> write() const override;

private:
    // The constructor's parts, top to bottom, then the connections (RunnersPage.cpp).
    void buildTable();
    QHBoxLayout* buildButtons();
    QFormLayout* buildPickers();
    void wireSignals();
    void fill();
    void refreshPickers();
    void updateButtons();
    void showCheck();
    void editRow(int row);
    /// `config` judged by the engine's reader; empty when it reads.
    QString judge(const kf::RunnersConfig& config) const;

    QString m_localRunner;
    kf::RunnersConfig m_config;
    QHash<QString, EndpointCheck> m_checks;
    std::shared_ptr<kf::CancelToken> m_cancel;
    QFutureWatcher<EndpointCheck>* m_watcher = nullptr;
    QString m_checking;   ///< the endpoint being checked, empty when none

    QTableWidget* m_table = nullptr;
    QPushButton* m_add = nullptr;
    QPushButton* m_edit = nullptr;
    QPushButton* m_remove = nullptr;
    QPushButton* m_check = nullptr;
    QPushButton* m_reload = nullptr;
    QComboBox* m_default = nullptr;
    QComboBox* m_workbench = nullptr;
    QLabel* m_checkText = nullptr;
};

} // namespace kf::app

