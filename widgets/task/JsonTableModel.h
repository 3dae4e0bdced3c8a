#pragma once
// A table over repeated entries of the task document: the elements of an array ("/inputs"),
// the members of an object ("/symbols", one row per name) or a single object ("/reference" in
// its one-op form). Each column is a field inside a row, addressed by a relative JSON pointer.
// Edits write straight into the TaskDocument; keys without a column are left alone.
//
// GUI thread only. The document must outlive the model.

#include "widgets/task/CellKind.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <string>
#include <vector>

namespace kf::ui {

class TaskDocument;

struct JsonColumn {
    QString header;
    std::string key;        ///< relative pointer inside a row ("/name", "/tolerance/rtol"); empty = the member name (Mode::Members)
    CellKind kind = CellKind::Text;
    QStringList choices;    ///< offered in a combo box when not empty
};

class JsonTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Mode { Elements, Members, Single };
    /// The choices of a column, for the delegate that edits it.
    static constexpr int ChoicesRole = Qt::UserRole + 1;

    JsonTableModel(TaskDocument* doc, QObject* parent = nullptr);

    /// Points the table at `rowsPointer`; resets the model when anything changed.
    void setRows(const std::string& rowsPointer, Mode mode);
    void setColumns(std::vector<JsonColumn> columns);
    /// What a new row holds (Elements) or the member value added under a fresh name (Members).
    void setNewRow(nlohmann::json value, QString memberPrefix = {});

    const std::string& rowsPointer() const { return m_rowsPointer; }
    Mode mode() const { return m_mode; }
    /// Absolute JSON pointer of a row ("/shapes/tests/3"), empty when out of range.
    std::string rowPointer(int row) const;
    /// The cell an absolute pointer falls in; column is -1 when it names the row only. Invalid
    /// when the pointer is not inside this table.
    QModelIndex indexForPointer(const std::string& pointer, int* column = nullptr) const;

    /// Marks the cell (column may be -1: whole row) that the validator complains about.
    void setErrorCell(int row, int column, const QString& message);
    void clearError();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool insertRows(int row, int count, const QModelIndex& parent = {}) override;
    bool removeRows(int row, int count, const QModelIndex& parent = {}) override;

private:
    void refresh();
    std::vector<std::string> currentKeys() const;
    const nlohmann::json* cellValue(int row, int column) const;

    TaskDocument* m_doc;
    std::string m_rowsPointer;
    Mode m_mode = Mode::Elements;
    std::vector<JsonColumn> m_columns;
    // Cached so the view sees row counts change only between begin/end notifications.
    std::vector<std::string> m_keys;
    nlohmann::json m_newRow = nlohmann::json::object();
    QString m_memberPrefix;
    int m_errorRow = -1;
    int m_errorColumn = -1;
    QString m_errorMessage;
    bool m_writing = false;
};

} // namespace kf::ui
