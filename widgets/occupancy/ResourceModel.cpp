#include "widgets/occupancy/ResourceModel.h"

#include "widgets/common/StatusColors.h"

#include <QBrush>
#include <QFont>

namespace kf::ui {
namespace {

const QString kUnknown = QStringLiteral("—");

QString spillText(int bytes)
{
    return bytes < 0 ? kUnknown : QString::number(bytes);
}

QString launchBoundsText(const kf::KernelResources& k)
{
    if (k.maxThreadsPerBlock <= 0 && k.minBlocksPerSm <= 0)
        return kUnknown;
    const QString threads = k.maxThreadsPerBlock > 0 ? QString::number(k.maxThreadsPerBlock) : kUnknown;
    const QString blocks = k.minBlocksPerSm > 0 ? QString::number(k.minBlocksPerSm) : kUnknown;
    return threads + QStringLiteral(" / ") + blocks;
}

} // namespace

ResourceModel::ResourceModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void ResourceModel::setKernels(std::vector<kf::KernelResources> kernels)
{
    beginResetModel();
    m_kernels = std::move(kernels);
    endResetModel();
}

const kf::KernelResources* ResourceModel::kernelAt(int row) const
{
    if (row < 0 || row >= static_cast<int>(m_kernels.size()))
        return nullptr;
    return &m_kernels[static_cast<size_t>(row)];
}

int ResourceModel::rowOf(const std::string& mangledName) const
{
    for (size_t i = 0; i < m_kernels.size(); ++i)
        if (m_kernels[i].name == mangledName)
            return static_cast<int>(i);
    return -1;
}

int ResourceModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_kernels.size());
}

int ResourceModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ResourceModel::data(const QModelIndex& index, int role) const
{
    const kf::KernelResources* k = index.isValid() ? kernelAt(index.row()) : nullptr;
    if (!k || index.column() < 0 || index.column() >= ColumnCount)
        return {};
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return display(*k, column);
    case Qt::ToolTipRole:
        return toolTip(*k, column);
    case Qt::TextAlignmentRole:
        return column == Kernel ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                                : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ForegroundRole:
        if (warns(*k, column))
            return QBrush(warningColor());
        return {};
    case Qt::FontRole:
        // Bold as well as coloured: the colour alone disappears under the row selection.
        if (warns(*k, column)) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case WarningRole:
        return warns(*k, column);
    case Qt::UserRole:
        switch (column) {
        case Kernel: return QString::fromStdString(k->name);
        case Registers: return k->registers;
        case StaticShared: return k->staticSharedBytes;
        case LocalBytes: return k->localBytes;
        case SpillStores: return k->spillStoreBytes;
        case SpillLoads: return k->spillLoadBytes;
        case ConstBank0: return k->constBank0Bytes;
        case ParamBytes: return k->paramBytes;
        case Barriers: return k->barriers;
        case LaunchBounds: return k->maxThreadsPerBlock;
        default: return {};
        }
    default:
        return {};
    }
}

QVariant ResourceModel::display(const kf::KernelResources& k, int column) const
{
    switch (column) {
    case Kernel: return QString::fromStdString(k.demangled.empty() ? k.name : k.demangled);
    case Registers: return QString::number(k.registers);
    case StaticShared: return QString::number(k.staticSharedBytes);
    case LocalBytes: return QString::number(k.localBytes);
    case SpillStores: return spillText(k.spillStoreBytes);
    case SpillLoads: return spillText(k.spillLoadBytes);
    case ConstBank0: return QString::number(k.constBank0Bytes);
    case ParamBytes: return QString::number(k.paramBytes);
    case Barriers: return QString::number(k.barriers);
    case LaunchBounds: return launchBoundsText(k);
    default: return {};
    }
}

QVariant ResourceModel::toolTip(const kf::KernelResources& k, int column) const
{
    switch (column) {
    case Kernel:
        return QString::fromStdString(k.name);
    case Registers:
        if (k.maxRegisterCount > 0)
            return tr("%1 registers per thread (capped at %2 by __maxnreg__ or -maxrregcount)")
                .arg(k.registers)
                .arg(k.maxRegisterCount);
        return tr("%1 registers per thread").arg(k.registers);
    case StaticShared:
        return tr("%1 bytes of static __shared__ memory per block, plus %2 bytes reserved by the system")
            .arg(k.staticSharedBytes)
            .arg(k.reservedSharedBytes);
    case LocalBytes:
        return tr("%1 bytes of stack frame (local memory) per thread").arg(k.localBytes);
    case SpillStores:
    case SpillLoads: {
        const int bytes = column == SpillStores ? k.spillStoreBytes : k.spillLoadBytes;
        if (bytes < 0)
            return tr("unknown: the build has no ptxas report (-Xptxas -v)");
        if (bytes > 0)
            return tr("%1 bytes of registers spilled to local memory per thread; every spill is a memory access")
                .arg(bytes);
        return tr("no register spills");
    }
    case ConstBank0:
        return tr("%1 bytes of constant bank 0 (kernel parameters and driver constants)").arg(k.constBank0Bytes);
    case ParamBytes:
        return tr("%1 bytes of kernel parameters").arg(k.paramBytes);
    case Barriers:
        return tr("%1 named barriers").arg(k.barriers);
    case LaunchBounds:
        return tr("__launch_bounds__(max threads per block, min blocks per SM); — when not set");
    default:
        return {};
    }
}

bool ResourceModel::warns(const kf::KernelResources& k, int column)
{
    if (column == SpillStores)
        return k.spillStoreBytes > 0;
    if (column == SpillLoads)
        return k.spillLoadBytes > 0;
    return false;
}

QVariant ResourceModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Kernel: return tr("Kernel");
        case Registers: return tr("Registers");
        case StaticShared: return tr("Static shared (B)");
        case LocalBytes: return tr("Local (B)");
        case SpillStores: return tr("Spill stores (B)");
        case SpillLoads: return tr("Spill loads (B)");
        case ConstBank0: return tr("Const bank 0 (B)");
        case ParamBytes: return tr("Params (B)");
        case Barriers: return tr("Barriers");
        case LaunchBounds: return tr("Launch bounds");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Registers: return tr("registers per thread");
        case StaticShared: return tr("static shared memory per block in bytes (reserved bytes in the cell tool tip)");
        case LocalBytes: return tr("stack frame per thread in bytes");
        case SpillStores: return tr("bytes spilled to local memory per thread (ptxas report)");
        case SpillLoads: return tr("bytes reloaded from local memory per thread (ptxas report)");
        case LaunchBounds: return tr("__launch_bounds__: max threads per block / min blocks per SM");
        default: return {};
        }
    }
    return {};
}

} // namespace kf::ui
