#include "widgets/tune/TuneTableModel.h"

#include "widgets/tune/TuneFigures.h"

#include <QFont>
#include <QGuiApplication>

#include <limits>

namespace kf::ui {

using kf::tune::PointResult;

TuneTableModel::TuneTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void TuneTableModel::setPoints(std::vector<PointResult> points)
{
    beginResetModel();
    m_points = std::move(points);
    endResetModel();
}

void TuneTableModel::updatePoint(const PointResult& point)
{
    for (std::size_t i = 0; i < m_points.size(); ++i)
        if (m_points[i].point == point.point) {
            m_points[i] = point;
            emit dataChanged(index(int(i), 0), index(int(i), ColumnCount - 1));
            return;
        }
    beginInsertRows({}, int(m_points.size()), int(m_points.size()));
    m_points.push_back(point);
    endInsertRows();
}

const PointResult* TuneTableModel::pointAt(int row) const
{
    return row >= 0 && row < int(m_points.size()) ? &m_points[std::size_t(row)] : nullptr;
}

int TuneTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_points.size()); }
int TuneTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TuneTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Number: return tr("#");
    case Parameters: return tr("Parameters");
    case Stage: return tr("Stage");
    case Registers: return tr("Registers");
    case Occupancy: return tr("Occupancy");
    case Time: return tr("Time (geomean)");
    case VsEager: return tr("vs eager");
    case PctPeak: return tr("% of peak");
    case Reason: return tr("Reason");
    }
    return {};
}

QVariant TuneTableModel::display(const PointResult& p, int row, int column) const
{
    switch (column) {
    case Number: return row + 1;
    case Parameters: return QString::fromStdString(p.point.label());
    case Stage: return tunefig::stageText(p.stage);
    case Registers: return p.compiled ? QVariant(p.registers) : QVariant(QStringLiteral("–"));
    case Occupancy: return p.occupancy ? QStringLiteral("%1 %").arg(QString::number(100 * *p.occupancy, 'f', 0)) : QStringLiteral("–");
    case Time: return p.rankMs() ? tunefig::msText(*p.rankMs()) : QStringLiteral("–");
    case VsEager: return p.speedupEager ? QStringLiteral("%1×").arg(QString::number(*p.speedupEager, 'f', 2)) : QStringLiteral("–");
    case PctPeak: return p.pctPeak ? QStringLiteral("%1 %").arg(QString::number(*p.pctPeak, 'f', 1)) : QStringLiteral("–");
    case Reason: return QString::fromStdString(p.reason).section(QLatin1Char('\n'), 0, 0);
    }
    return {};
}

QVariant TuneTableModel::sortKey(const PointResult& p, int row, int column) const
{
    constexpr double none = std::numeric_limits<double>::max();   // rows without the figure last
    switch (column) {
    case Number: return row;
    case Stage: return -int(p.stage);   // the winner first
    case Registers: return p.compiled ? double(p.registers) : none;
    case Occupancy: return p.occupancy ? -*p.occupancy : none;
    case Time: return p.rankMs().value_or(none);
    case VsEager: return p.speedupEager ? -*p.speedupEager : none;
    case PctPeak: return p.pctPeak ? -*p.pctPeak : none;
    default: return display(p, row, column);
    }
}

QVariant TuneTableModel::data(const QModelIndex& index, int role) const
{
    const PointResult* p = pointAt(index.row());
    if (!p || !index.isValid())
        return {};
    switch (role) {
    case Qt::DisplayRole: return display(*p, index.row(), index.column());
    case SortRole: return sortKey(*p, index.row(), index.column());
    case Qt::ToolTipRole: return tunefig::pointTip(*p, index.row() + 1);
    case Qt::TextAlignmentRole:
        return index.column() == Parameters || index.column() == Stage || index.column() == Reason
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
        if (index.column() == Stage || index.column() == Reason) {
            const Tone tone = tunefig::stageTone(p->stage);
            if (tone != Tone::Neutral)
                return verdictstyle::color(tone, QGuiApplication::palette());
        }
        return {};
    case Qt::FontRole:
        if (p->stage == kf::tune::Stage::Winner) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    }
    return {};
}

} // namespace kf::ui
