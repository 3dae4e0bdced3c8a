#include "widgets/profile/MetricTableModel.h"

#include "engine/protocol/MetricCatalog.h"
#include "widgets/profile/ProfileFormat.h"

#include <set>

namespace kf::ui {
namespace {

using kf::profile::KernelRecord;

std::optional<double> staticValue(const KernelRecord& k, double v)
{
    return k.statics.known ? std::optional<double>(v) : std::nullopt;
}

/// Derived numbers of one kernel, through the engine's own totals so FMA counting and units
/// agree with the bars and the roofline.
kf::profile::Totals totalsOfOne(const KernelRecord& k)
{
    return kf::profile::totalsOf({k});
}

QString exact(double v)
{
    return QString::number(v, 'g', 15);
}

} // namespace

MetricTableModel::MetricTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void MetricTableModel::buildRows(const kf::profile::ProfileReport& report)
{
    m_rows.clear();
    auto add = [this](QString key, QString tooltip, bool candidateOnly, auto value, auto format) {
        m_rows.push_back({std::move(key), std::move(tooltip), candidateOnly, value, format});
    };
    auto bytes = [](const KernelRecord&, double v) { return bytesText(v); };
    auto plain = [](const KernelRecord&, double v) { return QString::number(v, 'f', 0); };

    add(QStringLiteral("registers"), tr("registers per thread (from the cubin)"), true,
        [](const KernelRecord& k) { return staticValue(k, k.statics.registers); }, plain);
    add(QStringLiteral("static_shared_bytes"), tr("static shared memory per block"), true,
        [](const KernelRecord& k) { return staticValue(k, k.statics.staticSharedBytes); }, bytes);
    add(QStringLiteral("dynamic_shared_bytes"), tr("dynamic shared memory per block (the launch's third <<<>>> argument)"),
        true, [](const KernelRecord& k) { return std::optional<double>(static_cast<double>(k.dynamicSharedBytes)); },
        bytes);
    add(QStringLiteral("local_bytes"), tr("local memory per thread: register spills and stack"), true,
        [](const KernelRecord& k) { return staticValue(k, k.statics.localBytes); }, bytes);
    add(QStringLiteral("block"), tr("threads per block (x×y×z in the cell's tooltip)"), true,
        [](const KernelRecord& k) {
            return k.threadsPerBlock() > 0 ? std::optional<double>(static_cast<double>(k.threadsPerBlock())) : std::nullopt;
        },
        [](const KernelRecord& k, double) { return dimText(k.block); });
    add(QStringLiteral("grid"), tr("blocks in the grid"), true,
        [](const KernelRecord& k) {
            return k.blocks() > 0 ? std::optional<double>(static_cast<double>(k.blocks())) : std::nullopt;
        },
        [](const KernelRecord& k, double) { return dimText(k.grid); });
    add(QStringLiteral("theoretical_occupancy_pct"), tr("theoretical occupancy from the static numbers"), true,
        [](const KernelRecord& k) { return staticValue(k, k.statics.theoreticalOccupancyPct); },
        [](const KernelRecord&, double v) { return percentText(v); });

    auto derived = [](double (*pick)(const kf::profile::Totals&)) {
        return [pick](const KernelRecord& k) -> std::optional<double> {
            const kf::profile::Totals t = totalsOfOne(k);
            return t.hasCounters ? std::optional<double>(pick(t)) : std::nullopt;
        };
    };
    add(QStringLiteral("flops"), tr("floating-point operations, fp16 + fp32 + fp64 (an FMA counts two)"), false,
        derived([](const kf::profile::Totals& t) { return t.flops; }),
        [](const KernelRecord&, double v) { return countText(v); });
    add(QStringLiteral("arithmetic_intensity"), tr("FLOPs per DRAM byte"), false,
        derived([](const kf::profile::Totals& t) { return t.arithmeticIntensity; }),
        [](const KernelRecord&, double v) { return intensityText(v); });
    add(QStringLiteral("achieved_dram_bandwidth"), tr("DRAM bytes (read + write) over the duration"), false,
        derived([](const kf::profile::Totals& t) { return t.achievedDramGbs; }),
        [](const KernelRecord&, double v) { return bandwidthText(v); });
    add(QStringLiteral("achieved_flop_rate"), tr("FLOPs over the duration"), false,
        derived([](const kf::profile::Totals& t) { return t.achievedGflops; }),
        [](const KernelRecord&, double v) { return flopRateText(v); });

    std::set<std::string> known;
    for (const kf::profile::MetricInfo& m : kf::profile::metricCatalog()) {
        known.insert(m.key);
        const std::string key = m.key;
        QString tip = QStringLiteral("%1\n%2 (%3)").arg(QString::fromUtf8(m.meaning), QString::fromUtf8(m.cuptiName),
                                                        QString::fromUtf8(m.unit));
        if (m_unsupported.contains(QString::fromUtf8(m.key)))
            tip += tr("\nnot supported on %1").arg(m_chip);
        add(QString::fromUtf8(m.key), tip, false, [key](const KernelRecord& k) { return k.metric(key); },
            [&m](const KernelRecord&, double v) { return metricValueText(m, v); });
    }
    // Keys a newer runner may report: shown raw rather than dropped.
    std::set<std::string> extra;
    for (const auto* side : {&report.candidate, &report.baseline})
        if (*side)
            for (const KernelRecord& k : (*side)->kernels)
                for (const auto& [key, value] : k.metrics)
                    if (!known.count(key))
                        extra.insert(key);
    for (const std::string& key : extra)
        add(QString::fromStdString(key), tr("not in this version's metric catalogue"), false,
            [key](const KernelRecord& k) { return k.metric(key); },
            [](const KernelRecord&, double v) { return QString::number(v, 'g', 6); });
}

void MetricTableModel::setReport(const kf::profile::ProfileReport& report)
{
    beginResetModel();
    m_kernels.clear();
    m_candidateCount = 0;
    if (report.candidate) {
        m_kernels = report.candidate->kernels;
        m_candidateCount = static_cast<int>(m_kernels.size());
    }
    if (report.baseline)
        m_kernels.insert(m_kernels.end(), report.baseline->kernels.begin(), report.baseline->kernels.end());
    m_chip = QString::fromStdString(report.counters.chip);
    m_unsupported.clear();
    for (const std::string& key : report.counters.unsupported)
        m_unsupported << QString::fromStdString(key);
    m_absentWhy = report.counters.available ? tr("not collected") : tr("no counters: %1").arg(QString::fromStdString(report.counters.problem));
    buildRows(report);
    endResetModel();
}

void MetricTableModel::clear()
{
    beginResetModel();
    m_kernels.clear();
    m_rows.clear();
    m_candidateCount = 0;
    endResetModel();
}

int MetricTableModel::rowOf(const QString& key) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].key == key)
            return static_cast<int>(i);
    return -1;
}

int MetricTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int MetricTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() || m_rows.empty() ? 0 : 1 + static_cast<int>(m_kernels.size());
}

QVariant MetricTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    const Row& row = m_rows[static_cast<size_t>(index.row())];
    if (role == KeyRole)
        return row.key;
    if (index.column() == 0) {
        if (role == Qt::DisplayRole)
            return row.key;
        if (role == Qt::ToolTipRole)
            return row.tooltip;
        return {};
    }
    const int kernel = index.column() - 1;
    const KernelRecord& k = m_kernels[static_cast<size_t>(kernel)];
    const bool isBaseline = kernel >= m_candidateCount;
    const std::optional<double> v = isBaseline && row.candidateOnly ? std::nullopt : row.value(k);
    switch (role) {
    case Qt::DisplayRole:
        return v ? row.format(k, *v) : QStringLiteral("—");
    case Qt::ToolTipRole:
        if (v)
            return exact(*v);
        if (isBaseline && row.candidateOnly)
            return tr("the baseline's kernels are LibTorch's: their static numbers are not read");
        if (m_unsupported.contains(row.key))
            return tr("not supported on %1").arg(m_chip);
        return m_absentWhy;
    case ValueRole:
        return v ? QVariant(*v) : QVariant();
    case Qt::TextAlignmentRole:
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant MetricTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section == 0)
        return role == Qt::DisplayRole ? QVariant(tr("metric")) : QVariant();
    const int kernel = section - 1;
    const KernelRecord& k = m_kernels[static_cast<size_t>(kernel)];
    const bool isBaseline = kernel >= m_candidateCount;
    if (role == Qt::DisplayRole) {
        const QString side = isBaseline ? tr("baseline") : tr("candidate");
        const int count = isBaseline ? baselineColumns() : m_candidateCount;
        // One kernel a side reads "candidate"; several read "candidate 2: name".
        if (count == 1)
            return side;
        const int n = (isBaseline ? kernel - m_candidateCount : kernel) + 1;
        return QStringLiteral("%1 %2: %3").arg(side).arg(n).arg(shortKernelName(k));
    }
    if (role == Qt::ToolTipRole)
        return QString::fromStdString(k.demangled.empty() ? k.name : k.demangled);
    return {};
}

} // namespace kf::ui
