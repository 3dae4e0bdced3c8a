#pragma once
// Table model of per-kernel resource usage: one row per kernel of a build.

#include "engine/analysis/Resources.h"

#include <QAbstractTableModel>

#include <vector>

namespace kf::ui {

/// One row per kernel (KernelResources from CompileResult::kernels), one column per resource.
/// Display text is formatted for people ("—" for unknown), UserRole gives the raw number for
/// sorting, ToolTipRole explains the cell, and cells that deserve attention (spills) carry a
/// warning ForegroundRole, a bold FontRole and WarningRole == true. GUI thread only.
class ResourceModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Kernel,
        Registers,
        StaticShared,
        LocalBytes,
        SpillStores,
        SpillLoads,
        ConstBank0,
        ParamBytes,
        Barriers,
        LaunchBounds,
        ColumnCount
    };
    enum Role { WarningRole = Qt::UserRole + 1 };

    explicit ResourceModel(QObject* parent = nullptr);

    /// Replaces every row (a model reset).
    void setKernels(std::vector<kf::KernelResources> kernels);
    /// The kernel shown in `row`, or nullptr when out of range; valid until the next setKernels.
    const kf::KernelResources* kernelAt(int row) const;
    /// The row of the kernel with this mangled name, or -1.
    int rowOf(const std::string& mangledName) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const kf::KernelResources& k, int column) const;
    QVariant toolTip(const kf::KernelResources& k, int column) const;
    static bool warns(const kf::KernelResources& k, int column);

    std::vector<kf::KernelResources> m_kernels;
};

} // namespace kf::ui
