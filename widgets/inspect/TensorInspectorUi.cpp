// TensorInspector's widgets and their wiring; the behaviour is in TensorInspector.cpp.
#include "widgets/inspect/TensorInspector.h"

#include "widgets/common/SelectableLabel.h"
#include "widgets/inspect/CaseTensorsModel.h"
#include "widgets/inspect/ColorLegend.h"
#include "widgets/inspect/ErrorHistogramView.h"
#include "widgets/inspect/MismatchListModel.h"
#include "widgets/inspect/SliceControls.h"
#include "widgets/inspect/TensorCanvas.h"
#include "widgets/inspect/TensorViewport.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace kf::ui {

namespace {

QLabel* paneTitle(const QString& text, QWidget* parent)
{
    auto* l = new QLabel(text, parent);
    QFont f = l->font();
    f.setBold(true);
    l->setFont(f);
    return l;
}

QTableView* table(QAbstractItemModel* model, QWidget* parent)
{
    auto* v = new QTableView(parent);
    v->setModel(model);
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->setSelectionMode(QAbstractItemView::SingleSelection);
    v->setAlternatingRowColors(true);
    v->setWordWrap(false);
    v->verticalHeader()->hide();
    v->verticalHeader()->setDefaultSectionSize(v->fontMetrics().height() + 6);
    v->horizontalHeader()->setStretchLastSection(true);
    v->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    return v;
}

} // namespace

void TensorInspector::buildUi()
{
    m_pages = new QStackedWidget(this);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_pages);

    m_errorLabel = selectableLabel(QStringLiteral("inspectorError"), m_pages);
    m_errorLabel->setAlignment(Qt::AlignCenter);
    m_errorLabel->setMargin(24);
    m_pages->addWidget(m_errorLabel);

    auto* page = new QWidget(m_pages);
    m_pages->addWidget(page);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(8, 8, 8, 6);
    layout->setSpacing(6);

    buildHeader(page, layout);
    QPushButton* fit = buildControls(page, layout);
    m_progress = new QProgressBar(page);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumHeight(m_progress->fontMetrics().height());
    m_progress->setFormat(tr("Judging every element… %p%"));
    m_progress->hide();
    layout->addWidget(m_progress);

    QWidget* top = buildPanes(page);
    QWidget* lower = buildLists(page);
    auto* split = new QSplitter(Qt::Vertical, page);
    split->setChildrenCollapsible(false);
    split->addWidget(top);
    split->addWidget(lower);
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    layout->addLayout(buildActions(page));
    wireControls(fit);
}

void TensorInspector::buildHeader(QWidget* page, QVBoxLayout* layout)
{
    m_title = new QLabel(page);
    QFont big = m_title->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.15);
    m_title->setFont(big);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_failure = selectableLabel({}, page);
    m_warning = new QLabel(page);
    m_warning->setObjectName(QStringLiteral("inspectorWarning"));
    m_warning->setWordWrap(true);
    m_warning->setStyleSheet(QStringLiteral("QLabel#inspectorWarning { background: #7a5a00; color: #fff6d5; padding: 6px; border-radius: 3px; }"));
    m_warning->hide();
    layout->addWidget(m_title);
    layout->addWidget(m_failure);
    layout->addWidget(m_warning);
}

QPushButton* TensorInspector::buildControls(QWidget* page, QVBoxLayout* layout)
{
    auto* controls = new QHBoxLayout;
    m_tensorBox = new QComboBox(page);
    m_tensorBox->setToolTip(tr("Outputs show reference, candidate and difference; inputs show their values"));
    m_modeBox = new QComboBox(page);
    m_modeBox->addItem(tr("|error| ÷ tolerance"), static_cast<int>(DiffMode::Ratio));
    m_modeBox->addItem(tr("|error| (log)"), static_cast<int>(DiffMode::AbsError));
    m_slice = new SliceControls(page);
    m_prev = new QPushButton(tr("◀ Previous"), page);
    m_prev->setToolTip(tr("Previous mismatch (Shift+F8)"));
    m_next = new QPushButton(tr("Next ▶"), page);
    m_next->setToolTip(tr("Next mismatch in index order, across slices (F8)"));
    auto* fit = new QPushButton(tr("Fit"), page);
    fit->setToolTip(tr("Show the whole slice"));
    controls->addWidget(new QLabel(tr("Tensor:"), page));
    controls->addWidget(m_tensorBox);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Difference:"), page));
    controls->addWidget(m_modeBox);
    controls->addSpacing(12);
    controls->addWidget(m_slice);
    controls->addStretch(1);
    controls->addWidget(m_prev);
    controls->addWidget(m_next);
    controls->addWidget(fit);
    layout->addLayout(controls);
    return fit;
}

// The three panes side by side, the hover line and the two colour legends.
QWidget* TensorInspector::buildPanes(QWidget* page)
{
    auto* panes = new QSplitter(Qt::Horizontal, page);
    panes->setChildrenCollapsible(false);
    const QString titles[3] = {tr("Reference (expected)"), tr("Candidate (actual)"), tr("Difference")};
    for (int i = 0; i < 3; ++i) {
        auto* box = new QWidget(panes);
        auto* v = new QVBoxLayout(box);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(3);
        m_paneTitles[i] = paneTitle(titles[i], box);
        m_canvases[i] = new TensorCanvas(m_view, m_renderer, i, box);
        v->addWidget(m_paneTitles[i]);
        v->addWidget(m_canvases[i], 1);
        m_paneBoxes[i] = box;
        panes->addWidget(box);
    }
    for (int i = 0; i < 3; ++i)
        panes->setStretchFactor(i, 1);
    panes->setSizes({1000, 1000, 1000});
    m_canvases[2]->setStripsEnabled(true);
    m_canvases[2]->setToolTip(QString());

    auto* legends = new QHBoxLayout;
    m_valueLegend = new ColorLegend(page);
    m_diffLegend = new ColorLegend(page);
    legends->addWidget(m_valueLegend, 1);
    legends->addSpacing(16);
    legends->addWidget(m_diffLegend, 1);
    m_hover = new QLabel(page);
    m_hover->setObjectName(QStringLiteral("inspectorHover"));
    m_hover->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_hover->setMinimumHeight(m_hover->fontMetrics().height() + 8);
    m_hover->setStyleSheet(QStringLiteral("QLabel#inspectorHover { font-family: monospace; padding: 2px 4px; }"));

    auto* top = new QWidget(page);
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(panes, 1);
    topLayout->addWidget(m_hover);
    topLayout->addLayout(legends);
    return top;
}

// Below the panes: the list and the case's tensors on the left, the histogram beside them.
QWidget* TensorInspector::buildLists(QWidget* page)
{
    auto* tabs = new QTabWidget(page);
    m_mismatchView = table(m_mismatches, tabs);
    m_tensorView = table(m_tensors, tabs);
    tabs->addTab(m_mismatchView, tr("Mismatches"));
    tabs->addTab(m_tensorView, tr("Tensors"));
    auto* lower = new QSplitter(Qt::Horizontal, page);
    lower->setChildrenCollapsible(false);
    lower->addWidget(tabs);
    lower->addWidget(m_histogram);
    lower->setStretchFactor(0, 1);
    lower->setStretchFactor(1, 1);
    lower->setSizes({1000, 800});
    return lower;
}

// The status line with Export repro, Shrink and Re-run, which hand the case to the caller.
QHBoxLayout* TensorInspector::buildActions(QWidget* page)
{
    auto* bottom = new QHBoxLayout;
    m_status = new QLabel(page);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* exportButton = new QPushButton(tr("Export repro…"), page);
    exportButton->setToolTip(tr("Save this case with a script that reproduces it"));
    auto* shrinkButton = new QPushButton(tr("Shrink…"), page);
    shrinkButton->setToolTip(tr("Look for a smaller shape that fails the same way"));
    auto* rerunButton = new QPushButton(tr("Re-run"), page);
    rerunButton->setToolTip(tr("Run the candidate again on exactly these inputs"));
    bottom->addWidget(m_status, 1);
    bottom->addWidget(exportButton);
    bottom->addWidget(shrinkButton);
    bottom->addWidget(rerunButton);
    connect(exportButton, &QPushButton::clicked, this, [this] { emit exportReproRequested(caseDir()); });
    connect(shrinkButton, &QPushButton::clicked, this, [this] { emit shrinkRequested(caseDir()); });
    connect(rerunButton, &QPushButton::clicked, this, [this] { emit rerunRequested(caseDir()); });
    return bottom;
}

// Navigation (buttons, F8 and Shift+F8), the tensor and difference choices, the slice and the list.
void TensorInspector::wireControls(QPushButton* fit)
{
    connect(m_prev, &QPushButton::clicked, this, &TensorInspector::previous);
    connect(m_next, &QPushButton::clicked, this, &TensorInspector::next);
    connect(fit, &QPushButton::clicked, this, &TensorInspector::fitView);
    auto* f8 = new QShortcut(QKeySequence(Qt::Key_F8), this, this, &TensorInspector::next);
    f8->setContext(Qt::WidgetWithChildrenShortcut);
    auto* shiftF8 = new QShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F8), this, this, &TensorInspector::previous);
    shiftF8->setContext(Qt::WidgetWithChildrenShortcut);
    connect(m_modeBox, &QComboBox::activated, this,
            [this] { setDiffMode(static_cast<DiffMode>(m_modeBox->currentData().toInt())); });
    connect(m_tensorBox, &QComboBox::activated, this, [this] { showTensor(m_tensorBox->currentData().toString()); });
    connect(m_slice, &SliceControls::sliceEdited, m_view, &TensorViewport::setSlice);
    connect(m_mismatchView, &QTableView::activated, this, [this](const QModelIndex& index) {
        goTo(m_mismatches->flatIndex(index.row()));
    });
}

} // namespace kf::ui
