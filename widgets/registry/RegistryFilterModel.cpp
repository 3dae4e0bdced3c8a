#include "widgets/registry/RegistryFilterModel.h"

#include "widgets/registry/RegistryModel.h"

#include <QRegularExpression>

namespace kf::ui {

RegistryFilterModel::RegistryFilterModel(QObject* parent) : QSortFilterProxyModel(parent)
{
    setSortRole(RegistryModel::SortRole);
    setDynamicSortFilter(true);
}

void RegistryFilterModel::setFilterText(const QString& text)
{
    if (text == m_text)
        return;
    m_text = text;
    m_words = text.toLower().split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    invalidateRowsFilter();
}

void RegistryFilterModel::setShowDeprecated(bool show)
{
    if (show == m_showDeprecated)
        return;
    m_showDeprecated = show;
    invalidateRowsFilter();
}

bool RegistryFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (!m_showDeprecated && index.data(RegistryModel::DeprecatedRole).toBool())
        return false;
    const QString haystack = index.data(RegistryModel::FilterTextRole).toString();
    for (const QString& word : m_words)
        if (!haystack.contains(word))
            return false;
    return true;
}

} // namespace kf::ui
