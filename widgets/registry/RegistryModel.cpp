#include "widgets/registry/RegistryModel.h"

#include "engine/registry/KernelId.h"
#include "widgets/runs/ReportRows.h"

#include <QDateTime>
#include <QGuiApplication>
#include <QPalette>
#include <QSet>

#include <cmath>
#include <limits>

namespace kf::ui {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QDateTime parseUtc(const std::string& iso)
{
    QDateTime t = QDateTime::fromString(qs(iso), Qt::ISODateWithMs);
    if (!t.isValid())
        t = QDateTime::fromString(qs(iso), Qt::ISODate);
    return t;
}

// What a row shows or is filtered and sorted by; anything else (file hashes) does not repaint it.
bool sameShown(const kf::RegistryEntry& a, const kf::RegistryEntry& b)
{
    const auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
    return a.op == b.op && a.taskName == b.taskName && a.dtype == b.dtype && a.gpu == b.gpu && a.arch == b.arch &&
           a.benchmarkShapes == b.benchmarkShapes && same(a.geomeanSpeedup, b.geomeanSpeedup) &&
           same(a.minSpeedup, b.minSpeedup) && a.promotedAt == b.promotedAt && a.status == b.status &&
           a.deprecatedAt == b.deprecatedAt && a.deprecationReason == b.deprecationReason &&
           a.unsignedEvidence == b.unsignedEvidence && a.recordSignature == b.recordSignature;
}

// NaN is the worst speedup: sorting descending puts it last.
double sortableSpeedup(double v)
{
    return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
}

} // namespace

RegistryModel::RegistryModel(QObject* parent) : QAbstractTableModel(parent) {}

void RegistryModel::setEntries(const std::vector<kf::RegistryEntry>& entries)
{
    QSet<QString> incoming;
    for (const kf::RegistryEntry& e : entries)
        incoming.insert(qs(e.id));
    bool anySurvives = false;
    for (const kf::RegistryEntry& e : m_entries)
        anySurvives = anySurvives || incoming.contains(qs(e.id));
    if (!anySurvives) {
        beginResetModel();
        m_entries = entries;
        endResetModel();
        return;
    }

    for (int row = rowCount() - 1; row >= 0; --row) {
        if (incoming.contains(qs(m_entries[static_cast<size_t>(row)].id)))
            continue;
        beginRemoveRows({}, row, row);
        m_entries.erase(m_entries.begin() + row);
        endRemoveRows();
    }
    for (const kf::RegistryEntry& e : entries) {
        const int row = rowOf(qs(e.id));
        if (row < 0) {
            const int end = rowCount();
            beginInsertRows({}, end, end);
            m_entries.push_back(e);
            endInsertRows();
            continue;
        }
        kf::RegistryEntry& mine = m_entries[static_cast<size_t>(row)];
        const bool repaint = !sameShown(mine, e);
        mine = e;
        if (repaint)
            emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
}

int RegistryModel::rowOf(const QString& id) const
{
    const std::string key = id.toStdString();
    for (size_t i = 0; i < m_entries.size(); ++i)
        if (m_entries[i].id == key)
            return static_cast<int>(i);
    return -1;
}

const kf::RegistryEntry* RegistryModel::find(const QString& id) const
{
    const int row = rowOf(id);
    return row < 0 ? nullptr : &m_entries[static_cast<size_t>(row)];
}

QString RegistryModel::speedupText(double speedup)
{
    return std::isfinite(speedup) ? QString::number(speedup, 'f', 2) + QStringLiteral("×") : reportrows::numberText(speedup);
}

QString RegistryModel::localDateText(const std::string& isoUtc)
{
    const QDateTime t = parseUtc(isoUtc);
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")) : qs(isoUtc);
}

int RegistryModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int RegistryModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RegistryModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const kf::RegistryEntry& e = entryAt(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return display(e, index.column());
    case SortRole:
        return sortValue(e, index.column());
    case Qt::ToolTipRole:
        return toolTip(e, index.column());
    case IdRole:
        return qs(e.id);
    case DeprecatedRole:
        return e.deprecated();
    case FilterTextRole:
        return qs(e.id + ' ' + e.op + ' ' + e.taskName + ' ' + e.dtype + ' ' + e.gpu + ' ' + e.arch + ' ' + e.shapesText())
            .toLower();
    case Qt::ForegroundRole:
        if (e.deprecated())
            return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == SpeedupColumn || index.column() == MinSpeedupColumn || index.column() == CompileSpeedupColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return {};
    }
}

QVariant RegistryModel::display(const kf::RegistryEntry& e, int column) const
{
    switch (column) {
    case IdColumn:
        return qs(e.id);
    case OpColumn:
        return qs(e.op);
    case DTypeColumn:
        return qs(e.dtype);
    case GpuColumn: {
        // The vendor is the same on every row; the tooltip has the whole name.
        QString gpu = qs(e.gpu);
        if (gpu.startsWith(QLatin1String("NVIDIA ")))
            gpu = gpu.mid(7);
        return gpu;
    }
    case ShapesColumn:
        return qs(e.shapesText());
    case SpeedupColumn:
        return speedupText(e.geomeanSpeedup);
    case MinSpeedupColumn:
        return speedupText(e.minSpeedup);
    case CompileSpeedupColumn:
        return e.compileSpeedup ? speedupText(*e.compileSpeedup) : QString();
    case DateColumn:
        return localDateText(e.promotedAt);
    case StatusColumn:
        return qs(e.status) + (e.unsignedEvidence ? QStringLiteral(" · ") + qs(kf::kUnsignedEvidenceMarker) : QString()) +
               (e.recordSignature && kf::signatureBroken(*e.recordSignature) ? tr(" · record edited after signing") : QString());
    default:
        return {};
    }
}

QVariant RegistryModel::sortValue(const kf::RegistryEntry& e, int column) const
{
    switch (column) {
    case SpeedupColumn:
        return sortableSpeedup(e.geomeanSpeedup);
    case MinSpeedupColumn:
        return sortableSpeedup(e.minSpeedup);
    case CompileSpeedupColumn:
        return sortableSpeedup(e.compileSpeedup.value_or(std::nan("")));
    case DateColumn: {
        const QDateTime t = parseUtc(e.promotedAt);
        return t.isValid() ? t.toMSecsSinceEpoch() : std::numeric_limits<qint64>::min();
    }
    case IdColumn: {
        // "…_v10" after "…_v9": the prefix as text, then the version as a number.
        const auto split = kf::splitKernelId(e.id);
        if (split)
            return qs(split->first).toLower() + QLatin1Char('\x1f') + QString::number(split->second).rightJustified(9, QLatin1Char('0'));
        return qs(e.id).toLower();
    }
    default:
        return display(e, column).toString().toLower();
    }
}

QVariant RegistryModel::toolTip(const kf::RegistryEntry& e, int column) const
{
    QString tip;
    switch (column) {
    case IdColumn:
        tip = qs(e.id) + QStringLiteral("\ntask %1, %2, kernel file %3").arg(qs(e.taskName), qs(e.arch), qs(e.kernelFile));
        break;
    case GpuColumn:
        tip = qs(e.gpu) + QStringLiteral(" (") + qs(e.arch) + QLatin1Char(')');
        break;
    case ShapesColumn:
        tip = tr("Benchmark shapes: %1").arg(qs(e.shapesText()));
        break;
    case SpeedupColumn:
        tip = tr("Geometric mean of LibTorch's median time over this kernel's, over the benchmark shapes");
        break;
    case MinSpeedupColumn:
        tip = tr("Speedup on the slowest benchmark shape");
        break;
    case DateColumn:
        tip = tr("Promoted %1 (UTC)").arg(qs(e.promotedAt));
        break;
    case StatusColumn:
        if (e.recordSignature)
            tip = tr("promotion.json: %1").arg(qs(kf::signatureTrustText(*e.recordSignature)));
        if (e.unsignedEvidence)
            tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                   tr("Promoted with --allow-unsigned: its reports' signatures did not hold");
        break;
    default:
        break;
    }
    if (e.deprecated()) {
        const QString reason = e.deprecationReason.empty() ? tr("no reason given") : qs(e.deprecationReason);
        const QString when = e.deprecatedAt.empty() ? QString() : QStringLiteral(" ") + tr("on %1").arg(localDateText(e.deprecatedAt));
        tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) + tr("Deprecated%1: %2").arg(when, reason);
    }
    return tip.isEmpty() ? QVariant() : QVariant(tip);
}

QVariant RegistryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case IdColumn: return tr("ID");
        case OpColumn: return tr("Op");
        case DTypeColumn: return tr("DType");
        case GpuColumn: return tr("GPU");
        case ShapesColumn: return tr("Shapes");
        case SpeedupColumn: return tr("Speedup");
        case MinSpeedupColumn: return tr("Min speedup");
        case CompileSpeedupColumn: return tr("vs torch.compile");
        case DateColumn: return tr("Promoted");
        case StatusColumn: return tr("Status");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (section == SpeedupColumn)
            return tr("Geometric mean over the benchmark shapes against LibTorch (op-level microbenchmark)");
        if (section == MinSpeedupColumn)
            return tr("The smallest per-shape speedup against LibTorch");
        if (section == CompileSpeedupColumn)
            return tr("Geometric mean against torch.compile's faster mode, when the promotion measured it (empty: not compared)");
        if (section == DateColumn)
            return tr("When the version was promoted, in local time");
    }
    return {};
}

} // namespace kf::ui
