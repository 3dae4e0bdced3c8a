#include "widgets/tune/TuneView.h"

#include "widgets/common/SelectableLabel.h"
#include "widgets/tune/TuneChart.h"
#include "widgets/tune/TuneFigures.h"
#include "widgets/tune/TuneTableModel.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace kf::ui {

TuneView::TuneView(QWidget* parent)
    : QWidget(parent)
    , m_chart(new TuneChart(this))
    , m_model(new TuneTableModel(this))
    , m_sorted(new QSortFilterProxyModel(this))
{
    buildUi();
    setTarget({}, tr("Open a candidate whose task.json entry has a \"tune\" block."));
}

QLayout* TuneView::buildControls()
{
    m_target = new QLabel(this);
    m_target->setObjectName(QStringLiteral("tuneTarget"));
    QFont title = m_target->font();
    title.setBold(true);
    title.setPointSizeF(title.pointSizeF() * 1.1);
    m_target->setFont(title);
    m_target->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_budget = new QDoubleSpinBox(this);
    m_budget->setObjectName(QStringLiteral("tuneBudget"));
    m_budget->setRange(5, 3600);
    m_budget->setDecimals(0);
    m_budget->setSuffix(tr(" s"));
    m_budget->setValue(120);
    m_budget->setToolTip(tr("Wall-clock budget of the search, the finalists' re-measure included"));
    m_start = new QPushButton(tr("Tune"), this);
    m_start->setObjectName(QStringLiteral("tuneStart"));
    m_start->setDefault(true);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("tuneCancel"));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->setMaximumHeight(12);
    m_stage = new QLabel(this);
    m_stage->setObjectName(QStringLiteral("tuneStage"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(m_target, 1);
    controls->addWidget(new QLabel(tr("Budget"), this));
    controls->addWidget(m_budget);
    controls->addWidget(m_start);
    controls->addWidget(m_cancel);
    auto* progress = new QHBoxLayout;
    progress->addWidget(m_progress, 2);
    progress->addWidget(m_stage, 3);
    auto* rows = new QVBoxLayout;
    rows->addLayout(controls);
    rows->addLayout(progress);
    return rows;
}

void TuneView::buildUi()
{
    QLayout* controls = buildControls();
    m_sorted->setSourceModel(m_model);
    m_sorted->setSortRole(TuneTableModel::SortRole);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("tunePoints"));
    m_table->setModel(m_sorted);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(TuneTableModel::Number, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_table->setWordWrap(false);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_chart);
    split->addWidget(m_table);
    split->setChildrenCollapsible(false);
    split->setSizes({600, 400});   // the chart first: the search at a glance, the table for detail

    m_summary = selectableLabel(QStringLiteral("tuneSummary"), this);
    m_open = new QPushButton(tr("Open as Candidate"), this);
    m_open->setObjectName(QStringLiteral("tuneOpen"));
    m_open->setToolTip(tr("Add the selected point to the task as a new candidate with its defines, and open it"));
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_summary, 1);
    bottom->addWidget(m_open, 0, Qt::AlignTop);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(split, 1);
    layout->addLayout(bottom);

    connect(m_start, &QPushButton::clicked, this, [this] { emit startRequested(m_budget->value()); });
    connect(m_cancel, &QPushButton::clicked, this, &TuneView::cancelRequested);
    connect(m_open, &QPushButton::clicked, this, [this] {
        if (const kf::tune::PointResult* p = selectedPoint())
            emit openRequested(p->point);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &TuneView::updateButtons);
    connect(m_table, &QTableView::doubleClicked, this, [this] { m_open->click(); });
}

void TuneView::setTarget(const QString& target, const QString& why)
{
    m_hasTarget = !target.isEmpty();
    m_target->setText(m_hasTarget ? target : why);
    updateButtons();
}

double TuneView::budgetS() const { return m_budget->value(); }
void TuneView::setBudgetS(double s) { m_budget->setValue(s); }

void TuneView::begin()
{
    m_running = true;
    m_outcome.reset();
    m_compileMs.reset();
    m_runBudgetS = m_budget->value();
    m_model->setPoints({});
    m_progress->setValue(0);
    m_stage->setPalette(palette());
    m_stage->setText(tr("starting the runner…"));
    m_summary->clear();
    redrawChart();
    updateButtons();
}

void TuneView::step(const QString& stage, int done, int total, double elapsedS, const std::optional<kf::tune::PointResult>& point)
{
    m_progress->setValue(m_runBudgetS > 0 ? std::min(999, int(1000 * elapsedS / m_runBudgetS)) : 0);
    m_stage->setText(tr("%1 %2 of %3 · %4 s of %5 s").arg(stage).arg(done).arg(total).arg(int(elapsedS)).arg(int(m_runBudgetS)));
    if (!point)
        return;
    m_model->updatePoint(*point);
    // The columns fit the first rows; a large space's thousands of compile steps do not re-measure them.
    if (m_model->rowCount() <= 32)
        m_table->resizeColumnsToContents();
    // A point that compiled changes nothing on the chart; one that failed or got a time does.
    if (tunefig::failed(point->stage) || point->rankMs())
        redrawChart();
}

void TuneView::setOutcome(const kf::tune::Outcome& outcome)
{
    m_outcome = outcome;
    m_model->setPoints(outcome.points);
    m_table->resizeColumnsToContents();
    m_summary->setText(costText(outcome));
    redrawChart();
    if (outcome.winner)
        selectPoint(int(*outcome.winner) + 1);
    updateButtons();
}

void TuneView::setCompileMs(std::optional<double> ms)
{
    m_compileMs = ms;
    redrawChart();
}

void TuneView::finish(bool ok, const QString& sentence)
{
    m_running = false;
    m_progress->setValue(1000);
    m_stage->setText(sentence);
    QPalette p = m_stage->palette();
    p.setColor(QPalette::WindowText, verdictstyle::color(ok ? Tone::Good : Tone::Bad, palette()));
    m_stage->setPalette(p);
    updateButtons();
}

void TuneView::redrawChart()
{
    TuneChart::Data d;
    d.points = m_model->points();
    if (m_outcome) {
        d.floorMs = tunefig::floorMs(*m_outcome);
        d.eagerMs = tunefig::eagerMs(*m_outcome);
    }
    d.compileMs = m_compileMs;
    m_chart->setData(std::move(d));
}

const kf::tune::PointResult* TuneView::selectedPoint() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? nullptr : m_model->pointAt(m_sorted->mapToSource(rows.front()).row());
}

void TuneView::selectPoint(int number)
{
    const QModelIndex at = m_sorted->mapFromSource(m_model->index(number - 1, 0));
    m_table->selectRow(at.row());
    m_table->scrollTo(at);
}

void TuneView::updateButtons()
{
    m_start->setEnabled(m_hasTarget && !m_running);
    m_budget->setEnabled(!m_running);
    m_cancel->setEnabled(m_running);
    const kf::tune::PointResult* p = selectedPoint();
    // A point is a candidate worth opening once it compiled; the search's own is written when it ends.
    m_open->setEnabled(!m_running && p && p->compiled && m_outcome);
}

QString TuneView::costText(const kf::tune::Outcome& o)
{
    const kf::tune::Cost& c = o.cost;
    QString text = tr("%1 points of %2 combinations (%3 left out by \"where\"%4) on %5 · compiled %6, did not compile %7, "
                      "pruned %8 · verified %9 (%10 failed, never timed) · timed %11 in %12 bench runs, %13 of them the "
                      "finalists' re-measure · %14 s (compile %15 s, verify %16 s, bench %17 s)")
                       .arg(c.points)
                       .arg(o.space.combinations)
                       .arg(o.space.excluded)
                       .arg(o.space.sampledOut ? tr(", %1 sampled out").arg(o.space.sampledOut) : QString())
                       .arg(QString::fromStdString(o.arch))
                       .arg(c.compiled)
                       .arg(c.compileFailed)
                       .arg(c.pruned)
                       .arg(c.verified)
                       .arg(c.verifyFailed)
                       .arg(c.timed)
                       .arg(c.benchRuns)
                       .arg(c.remeasureRuns)
                       .arg(QString::number(c.wallS, 'f', 1), QString::number(c.compileS, 'f', 1), QString::number(c.verifyS, 'f', 1),
                            QString::number(c.benchS, 'f', 1));
    if (c.budgetSpent)
        text += tr(" · the budget ran out before the search ended");
    if (o.cancelled)
        text += tr(" · cancelled");
    return text;
}

} // namespace kf::ui
