#pragma once
// Settings ▸ Models: the language models kernel synthesis may use (docs/workbench.md,
// "Assistant"), edited in a table and stored in models.json through the engine's reader and
// writer (engine/synth/ModelsConfig.h), the same file `kforge synth` reads. Only the name of the
// environment variable holding an API key is stored, never the key. A file that does not read is
// shown with its path and JSON pointer and is never overwritten from an empty table.

#include "engine/synth/ModelsConfig.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace kf::app {

/// GUI thread.
class ModelsPage : public QWidget {
    Q_OBJECT
public:
    enum Column { Name, Provider, BaseUrl, Model, KeyVariable, PriceIn, PriceOut, ColumnCount };

    /// `file` empty: synth::modelsConfigPath(). Loads it at once.
    explicit ModelsPage(const QString& file = {}, QWidget* parent = nullptr);

    QString file() const { return m_file; }
    /// Reads the file into the table. False when it does not read: the table is emptied and
    /// disabled, loadError() says why, and save() leaves the file alone.
    bool load();
    QString loadError() const { return m_loadError; }
    /// The table as a configuration (fields the table does not show are kept from the file).
    kf::synth::ModelsConfig config() const;
    /// The first problem of the table as the engine's reader states it; empty when it can be saved.
    QString validationError() const;
    /// Writes the table with writeModelsConfig when it changed since load(). False with the
    /// reason in `error` (an invalid table, a write that failed).
    bool save(QString* error);
    bool isModified() const { return m_modified; }

    /// Appends a row (provider openai, a local server's URL) and returns its index.
    int addModel();
    void removeModel(int row);

    // Parts, for tests.
    QTableWidget* table() const { return m_table; }
    QComboBox* defaultPicker() const { return m_default; }
    QComboBox* escalationPicker() const { return m_escalation; }
    /// The provider picker of `row`.
    QComboBox* providerPicker(int row) const;

signals:
    /// The table or a picker changed (the dialog validates again).
    void changed();

private:
    void setRow(int row, const kf::synth::NamedModel& m);
    void refreshPickers();
    void edited();

    QString m_file;
    QString m_loadError;
    bool m_modified = false;
    bool m_loading = false;
    std::vector<kf::synth::ModelConfig> m_base;   ///< per row: what the table does not show
    QTableWidget* m_table = nullptr;
    QComboBox* m_default = nullptr;
    QComboBox* m_escalation = nullptr;
    QPushButton* m_add = nullptr;
    QStringList m_rowNames;   ///< the Name column as the pickers last saw it, by row
    QPushButton* m_remove = nullptr;
    QLabel* m_problem = nullptr;
};

} // namespace kf::app
