#pragma once
// The panel's "Occupancy" box: achieved occupancy (a counter) beside theoretical occupancy (the
// static numbers) and what limits it, with the resources behind the limit.

#include "engine/protocol/ProfileReport.h"

#include <QGroupBox>

class QLabel;

namespace kf::ui {

class PercentBar;
struct ProfileSelection;

/// Children by object name: bars "occupancy.achieved", "occupancy.theoretical",
/// "occupancy.baseline"; labels "occupancy.limiter", "occupancy.limits", "occupancy.resources".
/// GUI thread only.
class OccupancySection : public QGroupBox {
    Q_OBJECT
public:
    explicit OccupancySection(QWidget* parent = nullptr);

    /// `baseline` may be null. `countersWhy` is why counters are absent (empty when present).
    void setSelection(const ProfileSelection& candidate, const ProfileSelection* baseline, const QString& countersWhy);
    void clear();

protected:
    void changeEvent(QEvent* event) override;

private:
    void showLimits(const kf::profile::KernelRecord& k);
    void showSeveral(const ProfileSelection& candidate);
    void applyColors();

    PercentBar* m_achieved = nullptr;
    PercentBar* m_theoretical = nullptr;
    PercentBar* m_baseline = nullptr;
    QLabel* m_baselineLabel = nullptr;
    QLabel* m_limiter = nullptr;
    QLabel* m_limits = nullptr;
    QLabel* m_resources = nullptr;
};

} // namespace kf::ui
