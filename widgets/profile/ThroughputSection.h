#pragma once
// The panel's "Throughput" box: SM, DRAM and memory throughput as bars against peak, candidate
// and baseline side by side, then the numbers behind them (hit rates, traffic, duration, rates).

#include <QGroupBox>

#include <vector>

class QLabel;

namespace kf::profile {
struct Ceilings;
}

namespace kf::ui {

class PercentBar;
struct ProfileSelection;

/// Children by object name: the column heads "throughput.head.candidate|baseline"; bars
/// "throughput.<row>.candidate|baseline" for sm, dram, memory; value labels the same way for
/// l1, l2, dramBytes, duration, bandwidth, flopRate, intensity; "throughput.comparison" says
/// how the candidate's time compares with the baseline's. GUI thread only.
class ThroughputSection : public QGroupBox {
    Q_OBJECT
public:
    explicit ThroughputSection(QWidget* parent = nullptr);

    /// `baseline` may be null (its column hides). `countersWhy` is why counters are absent
    /// (empty when present).
    void setSelection(const ProfileSelection& candidate, const ProfileSelection* baseline,
                      const kf::profile::Ceilings& ceilings, const QString& countersWhy);
    void clear();

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Column {
        QLabel* head = nullptr;
        std::vector<PercentBar*> bars;  ///< sm, dram, memory
        std::vector<QLabel*> values;    ///< l1, l2, dramBytes, duration, bandwidth, flopRate, intensity
    };
    void fill(Column& column, const ProfileSelection& s, const kf::profile::Ceilings& ceilings, const QString& why);
    void setBaselineVisible(bool visible);
    void applyColors();

    Column m_columns[2];                ///< candidate, baseline
    QLabel* m_comparison = nullptr;
};

} // namespace kf::ui
