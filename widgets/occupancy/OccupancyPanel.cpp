#include "widgets/occupancy/OccupancyPanel.h"

#include "widgets/common/SelectableLabel.h"
#include "widgets/common/SpinBox.h"
#include "widgets/occupancy/OccupancyChart.h"
#include "widgets/occupancy/OccupancyCurves.h"
#include "widgets/occupancy/OccupancyExplain.h"
#include "widgets/occupancy/ResourceModel.h"
#include "widgets/common/StatusColors.h"

#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace kf::ui {
namespace {

constexpr int kMaxSpinBytes = 16 * 1024 * 1024;
constexpr int kMaxSpinThreads = 1 << 20;

QString percentText(double fraction)
{
    QString s = QString::number(fraction * 100.0, 'f', 1);
    if (s.endsWith(QLatin1String(".0")))
        s.chop(2);
    return s + QStringLiteral(" %");
}

} // namespace

OccupancyPanel::OccupancyPanel(QWidget* parent)
    : QWidget(parent)
    , m_occupancy(std::numeric_limits<double>::quiet_NaN())
{
    buildUi();
    setArchitecture(QStringLiteral("sm_90"));
    clear(tr("no build yet"));
}

OccupancyPanel::~OccupancyPanel() = default;

void OccupancyPanel::buildUi()
{
    buildTable();

    m_messageLabel = new QLabel(this);
    m_messageLabel->setObjectName(QStringLiteral("messageLabel"));
    m_messageLabel->setWordWrap(true);

    QFormLayout* form = buildInputs();
    QVBoxLayout* result = buildResult();
    auto* middle = new QHBoxLayout;
    middle->addLayout(form, 2);
    middle->addLayout(result, 3);

    QHBoxLayout* chartRow = buildCharts();

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_messageLabel);
    layout->addWidget(m_table);
    layout->addLayout(middle);
    layout->addLayout(chartRow, 1);
}

// The resource table: one row per kernel of the build.
void OccupancyPanel::buildTable()
{
    m_model = new ResourceModel(this);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("resourceTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Demangled template names get long; the kernel column takes what is left and elides.
    m_table->horizontalHeader()->setSectionResizeMode(ResourceModel::Kernel, QHeaderView::Stretch);
    m_table->setMaximumHeight(m_table->horizontalHeader()->sizeHint().height()
                              + 4 * m_table->verticalHeader()->defaultSectionSize() + 4);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { onTableRowActivated(current.row()); });
}

// What the numbers are computed for: architecture, kernel, block size, shared memory, registers.
QFormLayout* OccupancyPanel::buildInputs()
{
    m_archCombo = new QComboBox(this);
    m_archCombo->setObjectName(QStringLiteral("architectureCombo"));
    for (const kf::ArchInfo& a : kf::knownArchitectures())
        m_archCombo->addItem(architectureLabel(a), QString::fromStdString(a.arch));
    m_archCombo->setToolTip(tr("the GPU architecture the numbers are computed for; changing it recompiles"));
    connect(m_archCombo, &QComboBox::currentIndexChanged, this, &OccupancyPanel::onArchitectureIndexChanged);

    m_kernelCombo = new QComboBox(this);
    m_kernelCombo->setObjectName(QStringLiteral("kernelCombo"));
    m_kernelCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_kernelCombo->setMinimumContentsLength(16);
    m_kernelCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    connect(m_kernelCombo, &QComboBox::currentIndexChanged, this, &OccupancyPanel::onEntryChanged);

    m_blockSpin = rangeSpinBox(QStringLiteral("blockSizeSpin"), this, 1, kMaxSpinThreads, tr(" threads"), 32);
    m_blockSpin->setToolTip(tr("threads per block; the arrows step by a warp, any value can be typed"));

    m_sharedSpin = rangeSpinBox(QStringLiteral("dynamicSharedSpin"), this, 0, kMaxSpinBytes, tr(" B"), 1024);
    m_sharedSpin->setToolTip(tr("dynamic shared memory per block in bytes (the launch's third <<<>>> argument)"));

    m_regsSpin = rangeSpinBox(QStringLiteral("registersSpin"), this, 0, 255);
    m_regsSpin->setToolTip(tr("registers per thread: the compiled kernel's count; change it to explore"));

    for (QSpinBox* spin : {m_blockSpin, m_sharedSpin, m_regsSpin})
        connect(spin, &QSpinBox::valueChanged, this, [this] {
            if (!m_updating)
                recompute();
        });

    m_kernelFacts = new QLabel(this);
    m_kernelFacts->setObjectName(QStringLiteral("kernelFacts"));
    m_kernelFacts->setWordWrap(true);

    auto* form = new QFormLayout;
    form->addRow(tr("Architecture"), m_archCombo);
    form->addRow(tr("Kernel"), m_kernelCombo);
    form->addRow(tr("Block size"), m_blockSpin);
    form->addRow(tr("Dynamic shared"), m_sharedSpin);
    form->addRow(tr("Registers/thread"), m_regsSpin);
    form->addRow(QString(), m_kernelFacts);
    return form;
}

// The result: the occupancy, resident blocks and warps, the limiter and the limits.
QVBoxLayout* OccupancyPanel::buildResult()
{
    m_occupancyLabel = new QLabel(this);
    m_occupancyLabel->setObjectName(QStringLiteral("occupancyLabel"));
    QFont big = m_occupancyLabel->font();
    big.setPointSizeF(big.pointSizeF() * 2.4);
    big.setBold(true);
    m_occupancyLabel->setFont(big);
    m_occupancyLabel->setToolTip(tr("theoretical occupancy: resident warps per SM over the SM's warp slots"));
    m_residentLabel = new QLabel(this);
    m_residentLabel->setObjectName(QStringLiteral("residentLabel"));
    m_residentLabel->setWordWrap(true); // the panel lives in a dock: wrap rather than widen it
    m_limiterLabel = new QLabel(this);
    m_limiterLabel->setObjectName(QStringLiteral("limiterLabel"));
    m_limiterLabel->setWordWrap(true);
    m_limitsLabel = new QLabel(this);
    m_limitsLabel->setObjectName(QStringLiteral("limitsLabel"));
    m_limitsLabel->setTextFormat(Qt::RichText);
    m_limitsLabel->setWordWrap(true);
    m_errorLabel = selectableLabel(QStringLiteral("errorLabel"), this);

    auto* result = new QVBoxLayout;
    result->addWidget(m_occupancyLabel);
    result->addWidget(m_residentLabel);
    result->addWidget(m_limiterLabel);
    result->addWidget(m_limitsLabel);
    result->addWidget(m_errorLabel);
    result->addStretch(1);
    return result;
}

QHBoxLayout* OccupancyPanel::buildCharts()
{
    m_charts = {
        new OccupancyChart(tr("Occupancy vs block size"), tr("threads per block"), this),
        new OccupancyChart(tr("Occupancy vs registers"), tr("registers per thread"), this),
        new OccupancyChart(tr("Occupancy vs shared memory"), tr("shared memory per block (KiB)"), this),
    };
    m_charts[BlockSizeChart]->setObjectName(QStringLiteral("blockSizeChart"));
    m_charts[RegistersChart]->setObjectName(QStringLiteral("registersChart"));
    m_charts[SharedMemoryChart]->setObjectName(QStringLiteral("sharedMemoryChart"));
    auto* chartRow = new QHBoxLayout;
    for (OccupancyChart* c : m_charts)
        chartRow->addWidget(c, 1);
    return chartRow;
}

void OccupancyPanel::setKernels(std::vector<kf::KernelResources> kernels, std::vector<LaunchConfig> launches)
{
    const int previousIndex = m_kernelCombo->currentIndex();
    const std::optional<Entry> previous = previousIndex >= 0 && previousIndex < static_cast<int>(m_entries.size())
                                              ? std::optional<Entry>(m_entries[static_cast<size_t>(previousIndex)])
                                              : std::nullopt;
    const int previousBlock = m_blockSpin->value();
    const int previousShared = m_sharedSpin->value();

    const size_t kernelCount = kernels.size();
    m_model->setKernels(std::move(kernels));
    m_entries.clear();
    std::vector<bool> launched(kernelCount, false);
    for (const LaunchConfig& l : launches) {
        Entry e;
        e.label = QString::fromStdString(l.label.empty() ? l.lowered : l.label);
        e.lowered = QString::fromStdString(l.lowered);
        e.kernelRow = m_model->rowOf(l.lowered);
        e.blockThreads = l.blockThreads;
        e.dynamicSharedBytes = l.dynamicSharedBytes;
        if (e.kernelRow >= 0)
            launched[static_cast<size_t>(e.kernelRow)] = true;
        m_entries.push_back(std::move(e));
    }
    // Kernels no launch uses (helpers, alternatives) stay reachable at a default block size.
    for (size_t row = 0; row < kernelCount; ++row) {
        if (launched[row])
            continue;
        const kf::KernelResources* k = m_model->kernelAt(static_cast<int>(row));
        Entry e;
        e.label = QString::fromStdString(k->demangled.empty() ? k->name : k->demangled);
        e.lowered = QString::fromStdString(k->name);
        e.kernelRow = static_cast<int>(row);
        m_entries.push_back(std::move(e));
    }
    if (kernelCount == 0) {
        clear(launches.empty() ? tr("the build has no kernels") : tr("the build has none of the plan's kernels"));
        return;
    }

    int index = 0;
    bool sameLaunch = false;
    if (previous) {
        for (size_t i = 0; i < m_entries.size(); ++i)
            if (m_entries[i].label == previous->label) {
                index = static_cast<int>(i);
                sameLaunch = m_entries[i].blockThreads == previous->blockThreads
                             && m_entries[i].dynamicSharedBytes == previous->dynamicSharedBytes;
                break;
            }
    }

    m_updating = true;
    m_messageLabel->hide();
    m_kernelCombo->clear();
    for (const Entry& e : m_entries)
        m_kernelCombo->addItem(e.label, e.lowered);
    m_kernelCombo->setCurrentIndex(index);
    m_updating = false;
    onEntryChanged(index);
    if (sameLaunch) {
        // A rebuild while the user explores keeps their what-if launch; registers still come
        // from the new build because that is what the edit changed.
        m_updating = true;
        m_blockSpin->setValue(previousBlock);
        m_sharedSpin->setValue(previousShared);
        m_updating = false;
        recompute();
    }
}

void OccupancyPanel::setArchitecture(const QString& arch)
{
    const kf::ArchInfo* info = kf::findArchitecture(arch.toStdString());
    m_arch = info;
    m_archName = info ? QString::fromStdString(info->arch) : arch;
    m_updating = true;
    m_archCombo->setCurrentIndex(info ? m_archCombo->findData(m_archName) : -1);
    m_updating = false;
    recompute();
}

QString OccupancyPanel::architecture() const
{
    return m_archName;
}

void OccupancyPanel::clear(const QString& why)
{
    m_updating = true;
    m_model->setKernels({});
    m_entries.clear();
    m_kernelCombo->clear();
    m_updating = false;
    m_messageLabel->setText(why);
    m_messageLabel->show();
    showNothing(why);
}

double OccupancyPanel::occupancy() const
{
    return m_occupancy;
}

QString OccupancyPanel::limiterText() const
{
    return m_limiterText;
}

QString OccupancyPanel::errorText() const
{
    return m_errorText;
}

const kf::KernelResources* OccupancyPanel::currentKernel() const
{
    const int index = m_kernelCombo->currentIndex();
    if (index < 0 || index >= static_cast<int>(m_entries.size()))
        return nullptr;
    return m_model->kernelAt(m_entries[static_cast<size_t>(index)].kernelRow);
}

OccupancyChart* OccupancyPanel::chart(ChartKind kind) const
{
    return m_charts.value(kind);
}

QList<OccupancyChart*> OccupancyPanel::charts() const
{
    return m_charts;
}

ResourceModel* OccupancyPanel::resourceModel() const
{
    return m_model;
}

void OccupancyPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        setError(m_errorText); // the red must suit the new background
}

void OccupancyPanel::onArchitectureIndexChanged(int index)
{
    if (m_updating || index < 0)
        return;
    const QString arch = m_archCombo->itemData(index).toString();
    m_arch = kf::findArchitecture(arch.toStdString());
    m_archName = arch;
    recompute();
    emit architectureChanged(arch);
}

void OccupancyPanel::onEntryChanged(int index)
{
    if (m_updating || index < 0 || index >= static_cast<int>(m_entries.size()))
        return;
    const Entry& e = m_entries[static_cast<size_t>(index)];
    const kf::KernelResources* k = m_model->kernelAt(e.kernelRow);
    m_updating = true;
    m_blockSpin->setValue(std::clamp(e.blockThreads, 1, kMaxSpinThreads));
    m_sharedSpin->setValue(static_cast<int>(std::clamp<qint64>(e.dynamicSharedBytes, 0, kMaxSpinBytes)));
    if (k)
        m_regsSpin->setValue(k->registers);
    if (e.kernelRow >= 0)
        m_table->selectRow(e.kernelRow);
    else
        m_table->clearSelection();
    m_updating = false;
    recompute();
}

void OccupancyPanel::onTableRowActivated(int row)
{
    if (m_updating || row < 0)
        return;
    const int current = m_kernelCombo->currentIndex();
    if (current >= 0 && current < static_cast<int>(m_entries.size())
        && m_entries[static_cast<size_t>(current)].kernelRow == row)
        return;
    for (size_t i = 0; i < m_entries.size(); ++i)
        if (m_entries[i].kernelRow == row) {
            m_kernelCombo->setCurrentIndex(static_cast<int>(i));
            return;
        }
}

void OccupancyPanel::recompute()
{
    if (m_updating)
        return;
    if (!m_arch) {
        QStringList known;
        for (const kf::ArchInfo& a : kf::knownArchitectures())
            known << QString::fromStdString(a.arch);
        showNothing(QString());
        setError(tr("no occupancy data for %1; pick one of %2").arg(m_archName, known.join(QStringLiteral(", "))));
        return;
    }
    const int index = m_kernelCombo->currentIndex();
    if (index < 0 || index >= static_cast<int>(m_entries.size())) {
        showNothing(m_messageLabel->text());
        return;
    }
    const Entry& e = m_entries[static_cast<size_t>(index)];
    const kf::KernelResources* k = m_model->kernelAt(e.kernelRow);
    if (!k) {
        showNothing(QString());
        setError(tr("the build has no kernel %1, which the launch plan names").arg(e.lowered));
        return;
    }

    QString facts = tr("static shared %1 (+%2 reserved)").arg(bytesLabel(k->staticSharedBytes),
                                                              bytesLabel(m_arch->reservedSharedPerBlock));
    if (k->maxThreadsPerBlock > 0)
        facts += tr(" · __launch_bounds__ max %1 threads").arg(k->maxThreadsPerBlock);
    if (m_regsSpin->value() != k->registers)
        facts += tr(" · kernel uses %1 registers").arg(k->registers);
    m_kernelFacts->setText(facts);

    kf::OccupancyQuery q;
    q.blockSize = m_blockSpin->value();
    q.registersPerThread = m_regsSpin->value();
    q.staticSharedBytes = k->staticSharedBytes;
    q.dynamicSharedBytes = m_sharedSpin->value();
    q.maxThreadsPerBlock = k->maxThreadsPerBlock;
    const kf::Result<kf::Occupancy> r = kf::computeOccupancy(*m_arch, q);
    showResult(q, r);
    updateCharts(q, r);
}

void OccupancyPanel::showResult(const kf::OccupancyQuery& q, const kf::Result<kf::Occupancy>& r)
{
    if (!r) {
        m_occupancy = std::numeric_limits<double>::quiet_NaN();
        m_limiterText.clear();
        m_occupancyLabel->setText(QStringLiteral("—"));
        m_residentLabel->setText(tr("this configuration cannot launch on %1").arg(m_archName));
        m_limiterLabel->clear();
        m_limitsLabel->clear();
        setError(QString::fromStdString(r.error().message()));
        return;
    }
    const kf::Occupancy& o = *r;
    m_occupancy = o.occupancy;
    m_limiterText = limiterSentence(*m_arch, q, o);
    m_occupancyLabel->setText(percentText(o.occupancy));
    m_residentLabel->setText(tr("%1 of %2 warps · %3 blocks per SM on %4")
                                 .arg(o.activeWarpsPerSm)
                                 .arg(o.maxWarpsPerSm)
                                 .arg(o.activeBlocksPerSm)
                                 .arg(m_archName));
    m_limiterLabel->setText(m_limiterText);

    using L = kf::Occupancy::Limiter;
    auto cell = [&](const QString& name, int blocks, L which) {
        const QString text = QStringLiteral("%1 %2").arg(name).arg(blocks);
        return o.limiter == which ? QStringLiteral("<b>%1</b>").arg(text.toHtmlEscaped()) : text.toHtmlEscaped();
    };
    m_limitsLabel->setText(tr("blocks per SM allowed by ") + cell(tr("warps"), o.blocksLimitWarps, L::Warps)
                           + QStringLiteral(" · ") + cell(tr("registers"), o.blocksLimitRegisters, L::Registers)
                           + QStringLiteral(" · ")
                           + cell(tr("shared memory"), o.blocksLimitShared, L::SharedMemory)
                           + QStringLiteral(" · ") + cell(tr("block slots"), o.blocksLimitBlocks, L::Blocks));
    setError(QString());
}

void OccupancyPanel::updateCharts(const kf::OccupancyQuery& q, const kf::Result<kf::Occupancy>& r)
{
    const kf::ArchInfo& arch = *m_arch;
    const double markY = r ? r->occupancy * 100.0 : 0.0;

    m_charts[BlockSizeChart]->setCurve(blockSizeCurve(arch, q), 0, arch.maxThreadsPerBlock);
    m_charts[BlockSizeChart]->setMarker(QPointF(q.blockSize, markY));
    m_charts[RegistersChart]->setCurve(registersCurve(arch, q), 0, 256);
    m_charts[RegistersChart]->setMarker(QPointF(q.registersPerThread, markY));
    const double sharedKiB = (q.staticSharedBytes + static_cast<double>(q.dynamicSharedBytes)) / 1024.0;
    const double sharedMax = std::max(arch.sharedPerBlockOptin / 1024.0, sharedKiB);
    m_charts[SharedMemoryChart]->setCurve(sharedMemoryCurve(arch, q), 0, sharedMax, true);
    m_charts[SharedMemoryChart]->setMarker(QPointF(sharedKiB, markY));
}

void OccupancyPanel::showNothing(const QString& why)
{
    m_occupancy = std::numeric_limits<double>::quiet_NaN();
    m_limiterText.clear();
    m_occupancyLabel->setText(QStringLiteral("—"));
    m_residentLabel->setText(why);
    m_limiterLabel->clear();
    m_limitsLabel->clear();
    m_kernelFacts->clear();
    setError(QString());
    for (OccupancyChart* c : m_charts)
        c->clearData();
}

void OccupancyPanel::setError(const QString& text)
{
    m_errorText = text;
    m_errorLabel->setText(text);
    m_errorLabel->setVisible(!text.isEmpty());
    QPalette p = m_errorLabel->palette();
    p.setColor(QPalette::WindowText, errorColor(palette()));
    m_errorLabel->setPalette(p);
}

} // namespace kf::ui
