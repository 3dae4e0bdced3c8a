#pragma once
// The tensors of a case as a table: name, role, dtype, shape (the file in the tooltip).

#include <QAbstractTableModel>

#include <memory>

namespace kf::ui {

class CaseData;

/// GUI thread only.
class CaseTensorsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { NameColumn, RoleColumn, DTypeColumn, ShapeColumn, ColumnCount };
    explicit CaseTensorsModel(QObject* parent = nullptr);

    void setCase(std::shared_ptr<const CaseData> data);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const CaseData> m_data;
};

} // namespace kf::ui
