#include "widgets/registry/RegistryBrowser.h"

#include "engine/registry/KernelId.h"
#include "widgets/editor/KernelEditor.h"
#include "widgets/registry/DiffView.h"
#include "widgets/registry/EvidenceHtml.h"
#include "widgets/registry/RegistryFilterModel.h"
#include "widgets/registry/RegistryModel.h"
#include "widgets/registry/SpeedupChart.h"
#include "widgets/common/ElidedLabel.h"
#include "widgets/common/SelectableLabel.h"
#include "widgets/common/StatusColors.h"
#include "widgets/runs/ResultsModel.h"
#include "widgets/common/VerdictStyle.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QString prefixOf(const std::string& id)
{
    const auto split = kf::splitKernelId(id);
    return split ? qs(split->first) : qs(id);
}

// The older of two versions is the diff's left side: promotion time, then version number.
bool olderThan(const kf::RegistryEntry& a, const kf::RegistryEntry& b)
{
    if (a.promotedAt != b.promotedAt)
        return a.promotedAt < b.promotedAt;
    return a.version < b.version;
}

} // namespace

RegistryBrowser::RegistryBrowser(QWidget* parent) : QWidget(parent)
{
    m_model = new RegistryModel(this);
    m_filter = new RegistryFilterModel(this);
    m_filter->setSourceModel(m_model);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);

    m_directoryRow = new QWidget(this);
    auto* dirLayout = new QHBoxLayout(m_directoryRow);
    dirLayout->setContentsMargins(0, 0, 0, 0);
    auto* dirCaption = new QLabel(tr("Registry:"), m_directoryRow);
    m_directoryLabel = new ElidedLabel(m_directoryRow);
    dirLayout->addWidget(dirCaption);
    dirLayout->addWidget(m_directoryLabel, 1);
    layout->addWidget(m_directoryRow);

    m_loadError = selectableLabel({}, this);
    m_loadError->hide();
    layout->addWidget(m_loadError);

    auto* filterRow = new QHBoxLayout;
    m_filterEdit = new QLineEdit(this);
    m_filterEdit->setPlaceholderText(tr("Filter by ID, op, dtype, GPU or shape (every word must match)"));
    m_filterEdit->setClearButtonEnabled(true);
    m_showDeprecated = new QCheckBox(tr("Show deprecated"), this);
    m_showDeprecated->setChecked(m_filter->showDeprecated());
    m_showDeprecated->setToolTip(tr("Deprecated versions stay in the registry with their reason; they are greyed in the table."));
    filterRow->addWidget(m_filterEdit, 1);
    filterRow->addWidget(m_showDeprecated);
    layout->addLayout(filterRow);

    buildTable();

    m_placeholder = new QLabel(this);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setMargin(16);
    m_tableStack = new QStackedWidget(this);
    m_tableStack->addWidget(m_table);
    m_tableStack->addWidget(m_placeholder);
    // At least five rows and the header: the splitter is sized in showEvent(), which in a
    // tabified dock can run before the dock has its final height.
    m_tableStack->setMinimumHeight(m_table->verticalHeader()->defaultSectionSize() * 5 +
                                   m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth() +
                                   m_table->horizontalScrollBar()->sizeHint().height());

    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(m_tableStack);
    m_detailsPane = buildDetails();
    m_splitter->addWidget(m_detailsPane);
    m_splitter->setStretchFactor(0, 0);
    m_splitter->setStretchFactor(1, 1);
    layout->addWidget(m_splitter, 1);

    wireSignals();

    setDirectory(QString());
    updatePlaceholder();
    clearDetails(tr("Select a kernel to see its evidence, source, reports and speedups."));
}

// The versions table: newest promotion first, the shapes column taking what is left.
void RegistryBrowser::buildTable()
{
    m_table = new QTableView(this);
    m_table->setModel(m_filter);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RegistryModel::DateColumn, Qt::DescendingOrder); // newest promotion first
    m_table->setAlternatingRowColors(true);
    m_table->setTextElideMode(Qt::ElideMiddle); // IDs differ at both ends: op first, version last
    m_table->setWordWrap(false);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    QHeaderView* header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setStretchLastSection(false);
    header->setSectionResizeMode(RegistryModel::ShapesColumn, QHeaderView::Stretch);
    for (int c : {RegistryModel::OpColumn, RegistryModel::DTypeColumn, RegistryModel::SpeedupColumn, RegistryModel::MinSpeedupColumn,
                  RegistryModel::CompileSpeedupColumn,
                  RegistryModel::DateColumn, RegistryModel::StatusColumn})
        header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(RegistryModel::GpuColumn, QHeaderView::ResizeToContents);
}

void RegistryBrowser::wireSignals()
{
    connect(m_filterEdit, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_filter->setFilterText(text);
        updatePlaceholder();
    });
    connect(m_showDeprecated, &QCheckBox::toggled, this, [this](bool on) {
        m_filter->setShowDeprecated(on);
        updatePlaceholder();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &RegistryBrowser::onCurrentRowChanged);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RegistryBrowser::onCurrentRowChanged);
    connect(m_filter, &QAbstractItemModel::rowsRemoved, this, &RegistryBrowser::onCurrentRowChanged);
    connect(m_filter, &QAbstractItemModel::modelReset, this, &RegistryBrowser::onCurrentRowChanged);
    connect(m_model, &QAbstractItemModel::dataChanged, this, [this] {
        updateButtons();
        if (m_haveDetails)
            renderEvidence();
    });
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        if (currentId().isEmpty())
            return;
        QMenu menu(this);
        for (QPushButton* b : {m_open, m_reverify, m_export, m_deprecate, m_remove})
            menu.addAction(b->text(), b, &QPushButton::click)->setEnabled(b->isEnabled());
        menu.exec(m_table->viewport()->mapToGlobal(pos));
    });
}

QWidget* RegistryBrowser::buildDetails()
{
    auto* details = new QWidget(this);
    auto* layout = new QVBoxLayout(details);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addLayout(buildDetailsHeader(details));

    m_tabs = new QTabWidget(details);
    m_tabs->setDocumentMode(true);

    m_evidence = new QTextBrowser(m_tabs);
    m_evidence->setOpenLinks(false);
    m_tabs->addTab(m_evidence, tr("Evidence"));

    m_source = new KernelEditor(m_tabs);
    m_source->setReadOnly(true);
    m_tabs->addTab(m_source, tr("Source"));

    m_tabs->addTab(buildReportsTable(), tr("Reports"));

    m_chart = new SpeedupChart(m_tabs);
    m_tabs->addTab(m_chart, tr("Chart"));

    m_tabs->addTab(buildDiffPage(), tr("Diff"));
    layout->addWidget(m_tabs, 1);
    return details;
}

// The version's title and what can be done with it.
QHBoxLayout* RegistryBrowser::buildDetailsHeader(QWidget* details)
{
    auto* header = new QHBoxLayout;
    m_title = new ElidedLabel(details);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_open = new QPushButton(tr("Open as candidate"), details);
    m_open->setToolTip(tr("Copy this kernel and its task into the workspace as a new candidate to edit"));
    m_reverify = new QPushButton(tr("Re-verify on this GPU"), details);
    m_reverify->setToolTip(tr("Verify and benchmark this exact version again on the GPU of this machine"));
    m_deprecate = new QPushButton(tr("Deprecate…"), details);
    m_deprecate->setToolTip(tr("Keep this version in the registry but mark it as no longer current, with a reason"));
    m_remove = new QPushButton(tr("Remove…"), details);
    m_remove->setToolTip(tr("Delete this version and its evidence from the registry"));
    m_export = new QPushButton(tr("Export .cast…"), details);
    m_export->setToolTip(tr("Package this version (and others) with cubins for several GPUs, PTX, sources and "
                            "evidence, for PyTorch and LibTorch programs"));
    header->addWidget(m_title, 1);
    for (QPushButton* b : {m_open, m_reverify, m_export, m_deprecate, m_remove})
        header->addWidget(b);

    connect(m_open, &QPushButton::clicked, this, [this] { emitFor(&RegistryBrowser::openAsCandidateRequested); });
    connect(m_reverify, &QPushButton::clicked, this, [this] { emitFor(&RegistryBrowser::reverifyRequested); });
    connect(m_deprecate, &QPushButton::clicked, this, [this] { emitFor(&RegistryBrowser::deprecateRequested); });
    connect(m_remove, &QPushButton::clicked, this, [this] { emitFor(&RegistryBrowser::removeRequested); });
    connect(m_export, &QPushButton::clicked, this, [this] { emitFor(&RegistryBrowser::exportRequested); });
    return header;
}

// The version's saved reports, in their order: tests, held-out, benchmarks.
QWidget* RegistryBrowser::buildReportsTable()
{
    m_reports = new ResultsModel(this);
    auto* reportsSort = new QSortFilterProxyModel(this);
    reportsSort->setSourceModel(m_reports);
    reportsSort->setSortRole(ResultsModel::SortRole);
    m_reportsTable = new QTableView(m_tabs);
    m_reportsTable->setModel(reportsSort);
    m_reportsTable->setSortingEnabled(true);
    m_reportsTable->setAlternatingRowColors(true);
    m_reportsTable->setWordWrap(false);
    m_reportsTable->verticalHeader()->hide();
    m_reportsTable->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_reportsTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_reportsTable->horizontalHeader()->setStretchLastSection(true);
    m_reportsTable->sortByColumn(-1, Qt::AscendingOrder); // the reports' order: tests, held-out, benchmarks
    m_reportsTable->hideColumn(ResultsModel::CandidateColumn); // one kernel file per entry: the title names it
    return m_reportsTable;
}

// The source compared with another version's.
QWidget* RegistryBrowser::buildDiffPage()
{
    auto* diffPage = new QWidget(m_tabs);
    auto* diffLayout = new QVBoxLayout(diffPage);
    diffLayout->setContentsMargins(4, 4, 4, 4);
    auto* diffRow = new QHBoxLayout;
    m_diffWith = new QComboBox(diffPage);
    m_diffWith->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_diffWith->setMinimumContentsLength(30);
    diffRow->addWidget(new QLabel(tr("Compare with:"), diffPage));
    diffRow->addWidget(m_diffWith, 1);
    m_diff = new DiffView(diffPage);
    diffLayout->addLayout(diffRow);
    diffLayout->addWidget(m_diff, 1);
    connect(m_diffWith, &QComboBox::currentIndexChanged, this, [this] { requestDiff(); });
    return diffPage;
}

void RegistryBrowser::setDirectory(const QString& path)
{
    m_directory = path;
    const QString shown = path.isEmpty() ? tr("(not chosen yet)") : QDir::toNativeSeparators(path);
    m_directoryLabel->setText(shown);
    m_directoryRow->setToolTip(path.isEmpty() ? QString()
                                              : tr("Registry folder: %1\nIndex: %2")
                                                    .arg(shown, QDir::toNativeSeparators(QDir(path).filePath(QString::fromLatin1(kf::kRegistryIndexFile)))));
}

void RegistryBrowser::setIndex(const kf::RegistryIndex& index)
{
    m_index = index;
    m_indexLoaded = true;
    m_loadError->hide();
    m_model->setEntries(index.kernels);
    fitIdColumn();
    updatePlaceholder();
    if (m_table->currentIndex().isValid() && m_table->selectionModel()->selectedRows().isEmpty())
        m_table->selectRow(m_table->currentIndex().row());
    onCurrentRowChanged();
    fillDiffCombo();
    if (m_haveDetails)
        m_chart->setReport(m_details.performance && m_details.performance->bench() ? &*m_details.performance->bench() : nullptr,
                           m_index.threshold);
}

void RegistryBrowser::setLoadError(const QString& sentence)
{
    m_loadError->setText(sentence);
    m_loadError->setStyleSheet(QStringLiteral("color: %1").arg(verdictstyle::color(Tone::Bad, palette()).name()));
    m_loadError->show();
    updatePlaceholder();
}

QString RegistryBrowser::currentId() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    return rows.first().data(RegistryModel::IdRole).toString();
}

bool RegistryBrowser::selectId(const QString& id)
{
    const int sourceRow = m_model->rowOf(id);
    if (sourceRow < 0)
        return false;
    QModelIndex proxy = m_filter->mapFromSource(m_model->index(sourceRow, 0));
    if (!proxy.isValid()) {
        m_filterEdit->clear();
        if (m_model->entryAt(sourceRow).deprecated())
            m_showDeprecated->setChecked(true);
        proxy = m_filter->mapFromSource(m_model->index(sourceRow, 0));
    }
    m_table->selectionModel()->setCurrentIndex(proxy, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_table->scrollTo(proxy);
    return true;
}

void RegistryBrowser::fitIdColumn()
{
    // Whole IDs when they fit in 45 % of the table; longer ones are elided in the middle (the
    // version stays visible) with the whole ID in the tooltip.
    m_table->resizeColumnToContents(RegistryModel::IdColumn);
    const int cap = std::max(fontMetrics().averageCharWidth() * 24, m_table->viewport()->width() * 45 / 100);
    if (m_table->columnWidth(RegistryModel::IdColumn) > cap)
        m_table->setColumnWidth(RegistryModel::IdColumn, cap);
}

void RegistryBrowser::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_splitterSized)
        return;
    // The table needs a few rows; the details (evidence, source, diff) need the height.
    m_splitterSized = true;
    const int total = m_splitter->height();
    m_splitter->setSizes({total * 35 / 100, total - total * 35 / 100});
    fitIdColumn();
}

bool RegistryBrowser::placeholderShown() const
{
    return m_tableStack->currentWidget() == m_placeholder;
}

QString RegistryBrowser::placeholderText() const
{
    return m_placeholder->text();
}

void RegistryBrowser::updatePlaceholder()
{
    QString text;
    if (!m_indexLoaded)
        text = m_loadError->isVisible() ? tr("The registry could not be read (see above).") : tr("Loading the registry…");
    else if (m_model->rowCount() == 0)
        text = tr("No verified kernels yet: verify (F5) and benchmark (F6) a candidate, then Promote.");
    else if (m_filter->rowCount() == 0)
        text = m_showDeprecated->isChecked() ? tr("No kernel matches the filter: change or clear it.")
                                             : tr("No kernel matches: clear the filter or tick Show deprecated.");
    m_placeholder->setText(text);
    m_detailsPane->setVisible(m_model->rowCount() > 0); // nothing to detail in an empty registry
    m_tableStack->setCurrentWidget(text.isEmpty() ? static_cast<QWidget*>(m_table) : m_placeholder);
}

void RegistryBrowser::onCurrentRowChanged()
{
    updateButtons();
    const QString id = currentId();
    if (id == m_lastCurrent)
        return;
    m_lastCurrent = id;
    m_haveDetails = false;
    if (id.isEmpty())
        clearDetails(tr("Select a kernel to see its evidence, source, reports and speedups."));
    else
        clearDetails(tr("Loading the evidence of %1…").arg(id));
    fillDiffCombo();
    emit currentChanged(id);
}

void RegistryBrowser::updateButtons()
{
    const kf::RegistryEntry* e = m_model->find(currentId());
    m_open->setEnabled(e != nullptr);
    m_reverify->setEnabled(e != nullptr);
    m_remove->setEnabled(e != nullptr);
    m_export->setEnabled(e != nullptr);
    m_deprecate->setEnabled(e != nullptr && !e->deprecated());
    m_deprecate->setToolTip(e && e->deprecated() ? tr("Already deprecated: %1").arg(qs(e->deprecationReason))
                                                 : tr("Keep this version in the registry but mark it as no longer current, with a reason"));
    m_title->setText(e ? QStringLiteral("%1 — %2").arg(qs(e->id), qs(e->status)) : tr("No kernel selected"));
}

void RegistryBrowser::clearDetails(const QString& message)
{
    m_details = {};
    m_evidence->setHtml(QStringLiteral("<p>%1</p>").arg(message.toHtmlEscaped()));
    m_source->setReadOnly(false);
    m_source->clear();
    m_source->setReadOnly(true);
    m_reports->clear();
    m_chart->clearData();
    m_diff->showMessage(message);
}

void RegistryBrowser::setDetails(const RegistryDetails& details)
{
    if (details.entry.id.empty() || qs(details.entry.id) != currentId())
        return;
    m_details = details;
    m_haveDetails = true;
    renderEvidence();
    m_source->setReadOnly(false);
    m_source->setText(details.source);
    m_source->setFilePath(qs(details.entry.kernelFile));
    m_source->setReadOnly(true);
    m_reports->clear();
    if (details.correctness)
        m_reports->addReport(*details.correctness);
    if (details.performance)
        m_reports->addReport(*details.performance);
    m_chart->setReport(details.performance && details.performance->bench() ? &*details.performance->bench() : nullptr, m_index.threshold);
    requestDiff();
}

void RegistryBrowser::renderEvidence()
{
    const int scroll = m_evidence->verticalScrollBar() ? m_evidence->verticalScrollBar()->value() : 0;
    m_evidence->setHtml(evidencehtml::render(m_details, m_model->find(qs(m_details.entry.id)), isDarkPalette(palette())));
    m_evidence->verticalScrollBar()->setValue(scroll);
}

void RegistryBrowser::fillDiffCombo()
{
    const QString id = currentId();
    const kf::RegistryEntry* current = m_model->find(id);
    const QString previous = m_diffWith->currentData().toString();
    QSignalBlocker block(m_diffWith);
    m_diffWith->clear();
    if (!current) {
        m_diffWith->setEnabled(false);
        return;
    }
    // Same ID prefix first (the same op, dtype, GPU and shapes), newest first; then the same op or task.
    std::vector<const kf::RegistryEntry*> same, related;
    const QString prefix = prefixOf(current->id);
    for (const kf::RegistryEntry& e : m_model->entries()) {
        if (e.id == current->id)
            continue;
        if (prefixOf(e.id) == prefix)
            same.push_back(&e);
        else if (e.op == current->op || e.taskName == current->taskName)
            related.push_back(&e);
    }
    const auto newestFirst = [](const kf::RegistryEntry* a, const kf::RegistryEntry* b) { return olderThan(*b, *a); };
    std::sort(same.begin(), same.end(), newestFirst);
    std::sort(related.begin(), related.end(), newestFirst);
    for (const auto* list : {&same, &related})
        for (const kf::RegistryEntry* e : *list) {
            const QString label = QStringLiteral("%1  (%2, %3%4)")
                                      .arg(qs(e->id), RegistryModel::speedupText(e->geomeanSpeedup), RegistryModel::localDateText(e->promotedAt),
                                           e->deprecated() ? tr(", deprecated") : QString());
            m_diffWith->addItem(label, qs(e->id));
        }
    m_diffWith->setEnabled(m_diffWith->count() > 0);
    if (m_diffWith->count() == 0) {
        m_diffWith->addItem(tr("no other version of %1").arg(qs(current->op)));
        if (!previous.isEmpty())
            requestDiff();
        return;
    }
    // Keep the user's choice; else the version just before this one (the nearest older one with
    // the same prefix), else the first listed.
    int pick = m_diffWith->findData(previous);
    if (pick < 0) {
        for (size_t i = 0; i < same.size() && pick < 0; ++i)
            if (olderThan(*same[i], *current))
                pick = static_cast<int>(i);
    }
    m_diffWith->setCurrentIndex(std::max(pick, 0));
    if (m_diffWith->currentData().toString() != previous)
        requestDiff();
}

void RegistryBrowser::requestDiff()
{
    const QString id = currentId();
    const QString other = m_diffWith->currentData().toString();
    if (!m_haveDetails || id.isEmpty())
        return;
    if (other.isEmpty()) {
        m_diff->showMessage(tr("No other version of %1 is in the registry: promote another version to compare it with this one.")
                                .arg(qs(m_details.entry.op)));
        return;
    }
    m_diff->showMessage(tr("Reading the source of %1…").arg(other));
    emit diffRequested(id, other);
}

void RegistryBrowser::setDiff(const QString& id, const QString& otherId, const QString& otherSource, const QString& error)
{
    if (!m_haveDetails || id != currentId() || otherId != m_diffWith->currentData().toString())
        return;
    if (!error.isEmpty()) {
        m_diff->showMessage(error);
        return;
    }
    const kf::RegistryEntry* other = m_model->find(otherId);
    const kf::RegistryEntry& mine = m_details.entry;
    if (other && olderThan(mine, *other))
        m_diff->showDiff(id, m_details.source, otherId, otherSource);
    else
        m_diff->showDiff(otherId, otherSource, id, m_details.source);
}

void RegistryBrowser::emitFor(void (RegistryBrowser::*signal)(const QString&))
{
    const QString id = currentId();
    if (!id.isEmpty())
        emit(this->*signal)(id);
}

void RegistryBrowser::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_haveDetails)
        renderEvidence();
}

} // namespace kf::ui
