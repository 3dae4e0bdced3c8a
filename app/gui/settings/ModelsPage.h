#pragma once
// Settings ▸ Models: the language models kernel synthesis may use (docs/workbench.md,
// "Assistant"), edited in a table and stored in models.json through the engine's reader and
// writer (engine/synth/ModelsConfig.h), the same file `kforge synth` reads. Only the name of the
// environment variable holding an API key is stored, never the key. A file that does not read is
// shown with its path and JSON pointer and is never overwritten from an empty table.

#include "app/gui/settings/ConfigFilePage.h"
#include "engine/synth/ModelsConfig.h"

#include <QString>
#include <QStringList>

#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace kf::app {

/// GUI thread.
class ModelsPage : public ConfigFilePage {
    Q_OBJECT
public:
    enum Column { Name, Provider, BaseUrl, Model, KeyVariable, PriceIn, PriceOut, ColumnCount };

    /// `file` empty: synth::modelsConfigPath(). Loads it at once.
    explicit ModelsPage(const QString& file = {}, QWidget* parent = nullptr);

    /// Reads the file into the table. False when it does not read: the table is emptied and
    /// disabled, loadError() says why, and save() leaves the file alone.
    bool load();
    /// The table as a configuration (fields the table does not show are kept from the file).
    kf::synth::ModelsConfig config() const;

    /// Appends a row (provider openai, a local server's URL) and returns its index.
    int addModel();
    void removeModel(int row);

    // Parts, for tests.
    QTableWidget* table() const { return m_table; }
    QComboBox* defaultPicker() const { return m_default; }
    QComboBox* escalationPicker() const { return m_escalation; }
    /// The provider picker of `row`.
    QComboBox* providerPicker(int row) const;

protected:
    /// A model without a name, then what the engine's reader refuses (save() writes with
    /// writeModelsConfig).
    QString firstProblem() const override;
    kf::Result<void> write() const override;

private:
    void setRow(int row, const kf::synth::NamedModel& m);
    void refreshPickers();

    std::vector<kf::synth::ModelConfig> m_base;   ///< per row: what the table does not show
    QTableWidget* m_table = nullptr;
    QComboBox* m_default = nullptr;
    QComboBox* m_escalation = nullptr;
    QPushButton* m_add = nullptr;
    QStringList m_rowNames;   ///< the Name column as the pickers last saw it, by row
    QPushButton* m_remove = nullptr;
};

} // namespace kf::app
