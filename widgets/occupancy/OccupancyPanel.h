#pragma once
// The occupancy calculator: resource table, launch configuration, theoretical occupancy with
// its limiting factor, and occupancy charts over block size, registers and shared memory.

#include "engine/analysis/Occupancy.h"
#include "widgets/occupancy/LaunchConfig.h"

#include <QList>
#include <QString>
#include <QWidget>

#include <vector>

class QComboBox;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QSpinBox;
class QTableView;
class QVBoxLayout;

namespace kf::ui {

class OccupancyChart;
class ResourceModel;

/// Nsight-Compute-like occupancy calculator for the kernels of one build. Every number comes
/// from the engine (kf::computeOccupancy, kf::occupancyCurve, kf::knownArchitectures); the
/// panel only chooses the inputs and words the result. The user may change block size, dynamic
/// shared memory and registers per thread to explore; picking another architecture emits
/// architectureChanged so the owner can recompile for it. GUI thread only.
class OccupancyPanel : public QWidget {
    Q_OBJECT
public:
    enum ChartKind { BlockSizeChart, RegistersChart, SharedMemoryChart };

    explicit OccupancyPanel(QWidget* parent = nullptr);
    ~OccupancyPanel() override;

    /// Shows the kernels of a build (CompileResult::kernels) and the plan's launches at the
    /// representative shape (launchConfigsFrom). The kernel selector lists the launches, then
    /// every kernel no launch uses (at 256 threads). The first entry is selected, unless the
    /// entry selected before has the same label: then it stays selected, and the block size and
    /// shared memory the user set stay too unless the launch itself changed. Registers always
    /// come from the new build. No kernels at all is shown like clear().
    void setKernels(std::vector<kf::KernelResources> kernels, std::vector<LaunchConfig> launches);

    /// Selects the architecture the numbers are computed for ("sm_90"; "sm_90a" and
    /// "compute_90" map to sm_90) without emitting architectureChanged. An architecture the
    /// occupancy table does not know is kept as the name and shown as an error.
    void setArchitecture(const QString& arch);
    /// "sm_90": the architecture selected now.
    QString architecture() const;

    /// Empties the panel and shows why there is nothing to show ("the source has errors").
    void clear(const QString& why);

    // Read-only views of what the panel shows (for tests and for the owner's status line).
    /// Theoretical occupancy 0..1 of the current configuration; NaN when it cannot launch or
    /// nothing is selected.
    double occupancy() const;
    /// The limiting factor in words; empty when there is no valid configuration.
    QString limiterText() const;
    /// Why the configuration cannot launch (red in the panel); empty when it can.
    QString errorText() const;
    /// The kernel the calculator is using, or nullptr.
    const kf::KernelResources* currentKernel() const;
    OccupancyChart* chart(ChartKind kind) const;
    QList<OccupancyChart*> charts() const;
    ResourceModel* resourceModel() const;

signals:
    /// The user picked another architecture in the selector.
    void architectureChanged(const QString& arch);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Entry {
        QString label;
        int kernelRow = -1;             ///< row in the resource model; -1 when the build lacks it
        QString lowered;
        int blockThreads = 256;
        qint64 dynamicSharedBytes = 0;
    };

    void buildUi();
    void buildTable();
    QFormLayout* buildInputs();
    QVBoxLayout* buildResult();
    QHBoxLayout* buildCharts();
    void onArchitectureIndexChanged(int index);
    void onEntryChanged(int index);
    void onTableRowActivated(int row);
    void recompute();
    void showResult(const kf::OccupancyQuery& query, const kf::Result<kf::Occupancy>& result);
    void updateCharts(const kf::OccupancyQuery& query, const kf::Result<kf::Occupancy>& result);
    void showNothing(const QString& why);
    void setError(const QString& text);

    ResourceModel* m_model = nullptr;
    QTableView* m_table = nullptr;
    QComboBox* m_archCombo = nullptr;
    QComboBox* m_kernelCombo = nullptr;
    QSpinBox* m_blockSpin = nullptr;
    QSpinBox* m_sharedSpin = nullptr;
    QSpinBox* m_regsSpin = nullptr;
    QLabel* m_kernelFacts = nullptr;
    QLabel* m_occupancyLabel = nullptr;
    QLabel* m_residentLabel = nullptr;
    QLabel* m_limiterLabel = nullptr;
    QLabel* m_limitsLabel = nullptr;
    QLabel* m_errorLabel = nullptr;
    QLabel* m_messageLabel = nullptr;
    QList<OccupancyChart*> m_charts;

    std::vector<Entry> m_entries;
    const kf::ArchInfo* m_arch = nullptr;
    QString m_archName;
    double m_occupancy;
    QString m_limiterText;
    QString m_errorText;
    bool m_updating = false;            ///< set while the panel itself changes its controls
};

} // namespace kf::ui
