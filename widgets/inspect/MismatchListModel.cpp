#include "widgets/inspect/MismatchListModel.h"

#include "widgets/inspect/CaseData.h"
#include "widgets/inspect/ElementCode.h"
#include "widgets/inspect/ElementText.h"
#include "widgets/inspect/OutputAnalysis.h"
#include "widgets/inspect/SliceSpec.h"

#include <QColor>

#include <algorithm>

namespace kf::ui {

namespace et = elementtext;

MismatchListModel::MismatchListModel(QObject* parent) : QAbstractTableModel(parent) {}

void MismatchListModel::setSource(std::shared_ptr<const CaseData> data, std::shared_ptr<const TensorAnalysis> analysis)
{
    m_notifying = true;
    beginResetModel();
    m_data = std::move(data);
    m_analysis = analysis && analysis->output >= 0 ? std::move(analysis) : nullptr;
    m_rows.clear();
    m_scanned = 0;
    endResetModel();
    m_notifying = false;
}

int MismatchListModel::rowOf(std::int64_t flat)
{
    while (true) {
        auto it = std::lower_bound(m_rows.begin(), m_rows.end(), flat);
        if (it != m_rows.end() && *it == flat)
            return static_cast<int>(it - m_rows.begin());
        if (flat < m_scanned || !canFetchMore({}) || m_notifying)
            return -1;
        fetchMore({});
    }
}

int MismatchListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int MismatchListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

bool MismatchListModel::canFetchMore(const QModelIndex& parent) const
{
    return !parent.isValid() && m_analysis && m_scanned < static_cast<std::int64_t>(m_analysis->codes.size());
}

void MismatchListModel::fetchMore(const QModelIndex& parent)
{
    if (!canFetchMore(parent) || m_notifying)
        return;
    const auto& codes = m_analysis->codes;
    const auto n = static_cast<std::int64_t>(codes.size());
    std::vector<std::int64_t> found;
    std::int64_t i = m_scanned;
    for (; i < n && static_cast<int>(found.size()) < kChunk; ++i)
        if (elementcode::isMismatch(codes[static_cast<size_t>(i)]))
            found.push_back(i);
    m_scanned = i;
    if (found.empty())
        return;
    const int first = static_cast<int>(m_rows.size());
    m_notifying = true;
    beginInsertRows({}, first, first + static_cast<int>(found.size()) - 1);
    m_rows.insert(m_rows.end(), found.begin(), found.end());
    endInsertRows();
    m_notifying = false;
}

QVariant MismatchListModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || !m_data)
        return {};
    const std::int64_t flat = m_rows[static_cast<size_t>(index.row())];
    if (role == FlatIndexRole)
        return QVariant::fromValue<qlonglong>(flat);
    if (role == Qt::TextAlignmentRole)
        return index.column() == ClassColumn || index.column() == IndexColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                                              : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const int o = m_analysis->output;
    const double e = m_data->expected(o, flat);
    const ElementVerdict v = m_data->verdict(o, flat);
    const bool unwritten = v.cls == ElementClass::Unwritten;
    switch (index.column()) {
    case IndexColumn: {
        const auto& out = m_data->outputs()[static_cast<size_t>(o)];
        return et::index(SliceSpec::defaultFor(out.extents).index(flat));
    }
    case ExpectedColumn: return et::number(e);
    case ActualColumn: return unwritten ? tr("never written") : et::number(v.actual);
    case AbsErrorColumn: return unwritten ? QStringLiteral("—") : et::shortNumber(v.absError);
    case RelErrorColumn: return unwritten ? QStringLiteral("—") : et::shortNumber(et::relError(e, v));
    case ClassColumn: return et::className(v.cls);
    default: return {};
    }
}

QVariant MismatchListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IndexColumn: return tr("Index");
    case ExpectedColumn: return tr("Expected");
    case ActualColumn: return tr("Actual");
    case AbsErrorColumn: return tr("Abs error");
    case RelErrorColumn: return tr("Rel error");
    case ClassColumn: return tr("Class");
    default: return {};
    }
}

} // namespace kf::ui
