#pragma once
// Every number of a profile, one row per metric and one column per kernel: the candidate's
// kernels, then the baseline's. The raw material behind the panel's bars, for those who want
// the counter itself.

#include "engine/protocol/ProfileReport.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

namespace kf::ui {

/// Column 0 is the metric (its catalogue key; the meaning and CUPTI name as tooltip), then one
/// column per kernel. Rows: the static numbers, the derived ones (FLOPs, intensity, achieved
/// rates, from kf::profile::totalsOf of that kernel alone), then every catalogue metric, then
/// any key a report carries that the catalogue does not know. DisplayRole is formatted,
/// ToolTipRole exact, ValueRole the raw double (invalid when absent). GUI thread only.
class MetricTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int ValueRole = Qt::UserRole + 1;
    /// The row's key ("dram_read_bytes", or "registers" for a static row).
    static constexpr int KeyRole = Qt::UserRole + 2;

    explicit MetricTableModel(QObject* parent = nullptr);

    void setReport(const kf::profile::ProfileReport& report);
    void clear();

    /// The row of a metric key; -1 when absent.
    int rowOf(const QString& key) const;
    /// Columns: 0 the metric, then kernels. Candidate kernel i is column 1 + i.
    int candidateColumns() const { return m_candidateCount; }
    int baselineColumns() const { return static_cast<int>(m_kernels.size()) - m_candidateCount; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    struct Row {
        QString key;
        QString tooltip;
        bool candidateOnly = false;     ///< static numbers: baseline kernels are not ours to read
        std::function<std::optional<double>(const kf::profile::KernelRecord&)> value;
        std::function<QString(const kf::profile::KernelRecord&, double)> format;
    };
    void buildRows(const kf::profile::ProfileReport& report);

    std::vector<Row> m_rows;
    std::vector<kf::profile::KernelRecord> m_kernels;
    int m_candidateCount = 0;
    QString m_absentWhy;                ///< why a counter cell is empty ("counters unavailable")
    QStringList m_unsupported;          ///< catalogue keys the chip lacks
    QString m_chip;
};

} // namespace kf::ui
