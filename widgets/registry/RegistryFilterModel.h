#pragma once
// Narrows and sorts the registry table: free-text words that must all appear in an entry, and
// whether deprecated versions are listed.

#include <QSortFilterProxyModel>
#include <QStringList>

namespace kf::ui {

/// A proxy over RegistryModel (sorting by RegistryModel::SortRole). GUI thread only.
///
/// Deprecated versions are shown by default, greyed by the model: the registry never loses an
/// entry, and a browser that hid them would make a deprecated kernel look deleted exactly when
/// someone is investigating why it was deprecated. Hiding them is one click away.
class RegistryFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit RegistryFilterModel(QObject* parent = nullptr);

    /// Words separated by white space; a row matches when every word occurs, case-insensitively,
    /// in its ID, op, task, dtype, GPU, arch or shapes. Empty text matches every row.
    void setFilterText(const QString& text);
    QString filterText() const { return m_text; }

    void setShowDeprecated(bool show);
    bool showDeprecated() const { return m_showDeprecated; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_text;
    QStringList m_words;
    bool m_showDeprecated = true;
};

} // namespace kf::ui
