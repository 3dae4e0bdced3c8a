#include "widgets/inspect/CaseTensorsModel.h"

#include "widgets/inspect/CaseData.h"

#include <QDir>

namespace kf::ui {

CaseTensorsModel::CaseTensorsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CaseTensorsModel::setCase(std::shared_ptr<const CaseData> data)
{
    beginResetModel();
    m_data = std::move(data);
    endResetModel();
}

int CaseTensorsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_data ? 0 : static_cast<int>(m_data->tensors().size());
}

int CaseTensorsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CaseTensorsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !m_data || index.row() >= rowCount())
        return {};
    const CaseData::Tensor& t = m_data->tensors()[static_cast<size_t>(index.row())];
    if (role == Qt::ToolTipRole)
        return QDir::toNativeSeparators(t.file);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case NameColumn: return t.name;
    case RoleColumn: {
        QString r = QString::fromUtf8(caseRoleName(t.role).data());
        if (t.role == CaseTensor::Role::Actual && t.run > 0)
            r += tr(" (run %1)").arg(t.run);
        return r;
    }
    case DTypeColumn: return QString::fromUtf8(dtypeName(t.dtype).data());
    case ShapeColumn: {
        QStringList parts;
        for (auto e : t.extents)
            parts << QString::number(e);
        return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
    }
    default: return {};
    }
}

QVariant CaseTensorsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn: return tr("Tensor");
    case RoleColumn: return tr("Role");
    case DTypeColumn: return tr("DType");
    case ShapeColumn: return tr("Shape");
    default: return {};
    }
}

} // namespace kf::ui
