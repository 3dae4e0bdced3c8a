#pragma once
// The registry table: one row per verified kernel version as the index lists it, with the numbers
// a user compares (speedups, promotion date) sortable as numbers and deprecated versions greyed.

#include "engine/registry/Registry.h"

#include <QAbstractTableModel>
#include <QString>

#include <vector>

namespace kf::ui {

/// Rows from `kf::RegistryIndex::kernels`. GUI thread only; owned by its Qt parent.
///
/// Refreshing with setEntries() updates in place: rows of IDs that left are removed, rows of IDs
/// that stayed change their cells (dataChanged), new IDs are appended. Selections and the current
/// index of a view therefore survive a refresh. Only when no ID survives (another registry folder)
/// is the model reset.
class RegistryModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        IdColumn,
        OpColumn,
        DTypeColumn,
        GpuColumn,
        ShapesColumn,
        SpeedupColumn,    ///< geometric mean over the benchmark shapes
        MinSpeedupColumn, ///< the slowest benchmark shape
        CompileSpeedupColumn, ///< geometric mean over torch.compile; empty when not compared
        DateColumn,       ///< promoted_at, shown in local time
        StatusColumn,
        ColumnCount
    };
    /// A value that sorts as a user expects: speedups as doubles (NaN lowest), the date as
    /// milliseconds since the epoch, text as lower-case text. Use it as the proxy's sortRole.
    static constexpr int SortRole = Qt::UserRole + 1;
    /// The entry's ID (any column), for views that must find their entry behind a proxy.
    static constexpr int IdRole = Qt::UserRole + 2;
    /// Lower-case words a filter matches against: ID, op, task, dtype, GPU, arch and shapes.
    static constexpr int FilterTextRole = Qt::UserRole + 3;
    /// True for a deprecated entry.
    static constexpr int DeprecatedRole = Qt::UserRole + 4;

    explicit RegistryModel(QObject* parent = nullptr);

    /// Replaces the rows with `entries` (the index's order for new rows), in place as described above.
    void setEntries(const std::vector<kf::RegistryEntry>& entries);

    /// The entry at model row `row`.
    const kf::RegistryEntry& entryAt(int row) const { return m_entries.at(static_cast<size_t>(row)); }
    /// The model row of `id`, -1 when it is not listed.
    int rowOf(const QString& id) const;
    /// The entry with `id`, or nullptr.
    const kf::RegistryEntry* find(const QString& id) const;
    const std::vector<kf::RegistryEntry>& entries() const { return m_entries; }

    /// "1.36×"; "nan", "inf" for non-finite values.
    static QString speedupText(double speedup);
    /// promoted_at (UTC, ISO 8601) as a local date-time "2026-11-22 06:10"; the raw text when it
    /// does not parse.
    static QString localDateText(const std::string& isoUtc);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const kf::RegistryEntry& e, int column) const;
    QVariant sortValue(const kf::RegistryEntry& e, int column) const;
    QVariant toolTip(const kf::RegistryEntry& e, int column) const;

    std::vector<kf::RegistryEntry> m_entries;
};

} // namespace kf::ui
