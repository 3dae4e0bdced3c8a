#include "widgets/runs/RunPanel.h"
#include "engine/protocol/Verdict.h"

#include "widgets/common/ElidedLabel.h"
#include "widgets/common/SelectableLabel.h"
#include "widgets/runs/ReportRows.h"
#include "widgets/runs/ResultsModel.h"
#include "widgets/runs/RunVerdict.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QAction>
#include <QDir>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {


RunPanel::RunPanel(QWidget* parent) : QWidget(parent)
{
    m_title = new QLabel(tr("No run yet"), this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner = selectableLabel(QStringLiteral("runBanner"), this);
    m_banner->setFont(bold);

    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(QStringLiteral("0.0 %"));
    m_progress->setMinimumWidth(160);
    m_progress->setMaximumWidth(260);
    m_stage = new ElidedLabel(this);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setEnabled(false);
    m_cancel->setToolTip(tr("Stop the run; the runner is killed if a launch does not return"));
    connect(m_cancel, &QPushButton::clicked, this, &RunPanel::onCancelClicked);
    m_promote = new QPushButton(tr("Promote…"), this);
    m_promote->setEnabled(false);
    m_promote->setToolTip(tr("Verify (F5) and benchmark (F6) a candidate; Promote is enabled when it passes every gate"));
    connect(m_promote, &QPushButton::clicked, this, &RunPanel::promoteRequested);

    m_model = new ResultsModel(this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(ResultsModel::SortRole);
    m_table = new QTableView(this);
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSortIndicatorClearable(true);
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder); // report order until the user sorts
    m_table->setSortingEnabled(true);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QTableView::doubleClicked, this, &RunPanel::onRowDoubleClicked);
    connect(m_table, &QTableView::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex index = m_table->indexAt(pos);
        if (!index.isValid())
            return;
        QMenu* menu = createRowMenu(index);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(m_table->viewport()->mapToGlobal(pos));
    });

    m_log = new RunLogView(this);
    updateColumns();

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_log);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);

    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress);
    progressRow->addWidget(m_stage, 1);
    progressRow->addWidget(m_cancel);
    progressRow->addWidget(m_promote);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    // Title and banner on lines of their own: a crash sentence is long and must wrap, not clip.
    layout->addWidget(m_title);
    layout->addWidget(m_banner);
    layout->addLayout(progressRow);
    layout->addWidget(splitter, 1);
}

void RunPanel::setPromoteState(bool enabled, const QString& tooltip)
{
    m_promote->setEnabled(enabled);
    m_promote->setToolTip(tooltip);
}

void RunPanel::begin(const QString& title)
{
    m_running = true;
    m_runReports.clear();
    m_stageName = tr("starting");
    m_launch.clear();
    m_loggedStage.clear();
    m_title->setText(title);
    m_progress->setValue(0);
    m_progress->setFormat(QStringLiteral("0.0 %"));
    m_cancel->setEnabled(true);
    setBanner(Tone::Neutral, tr("running…"));
    updateStage();
    m_log->appendLine(RunLogView::Level::Info, title + tr(": started"));
}

void RunPanel::setProgress(int permille, const QString& stage)
{
    permille = std::clamp(permille, 0, 1000);
    m_progress->setValue(permille);
    m_progress->setFormat(QString::number(permille / 10.0, 'f', 1) + QStringLiteral(" %"));
    if (!stage.isEmpty())
        m_stageName = stage;
    // Bench stages end in a running sample count ("benchmark …: 37 samples"); log a stage once.
    const QString key = m_stageName.section(QStringLiteral(": "), 0, 0);
    if (key != m_loggedStage && !key.isEmpty()) {
        m_loggedStage = key;
        m_log->appendLine(RunLogView::Level::Info, m_stageName);
    }
    updateStage();
}

void RunPanel::setLaunch(const QString& label)
{
    m_launch = label;
    updateStage();
}

void RunPanel::appendLog(kf::protocol::Event::Level level, const QString& text)
{
    if (!text.isEmpty())
        m_log->appendLine(level == kf::protocol::Event::Level::Warning ? RunLogView::Level::Warning : RunLogView::Level::Info, text);
}

void RunPanel::updateColumns()
{
    // Only the columns some row has a value in: a verification has no timings, a benchmark no
    // errors, and a report without a placement block nothing to say where it ran.
    bool correctness = false, performance = false, compile = false, placement = false;
    for (int r = 0; r < m_model->rowCount(); ++r) {
        const ResultRow& row = m_model->rowAt(r);
        correctness = correctness || row.correctness.present;
        performance = performance || row.performance.present;
        compile = compile || row.performance.compileSpeedup || !row.performance.compileNote.isEmpty();
        placement = placement || !row.placementText().isEmpty();
    }
    for (int c : {ResultsModel::MaxAbsErrorColumn, ResultsModel::MaxRelErrorColumn, ResultsModel::ErrorRatioColumn,
                  ResultsModel::MismatchesColumn})
        m_table->setColumnHidden(c, !correctness);
    for (int c : {ResultsModel::CandidateMedianColumn, ResultsModel::BaselineMedianColumn, ResultsModel::SpeedupColumn,
                  ResultsModel::BandwidthColumn})
        m_table->setColumnHidden(c, !performance);
    m_table->setColumnHidden(ResultsModel::CompileSpeedupColumn, !compile);
    m_table->setColumnHidden(ResultsModel::PlacementColumn, !placement);
}

void RunPanel::addReport(const kf::protocol::RunReport& report)
{
    m_model->addReport(report);
    m_runReports.push_back(report);
    updateColumns();
    m_table->resizeColumnsToContents();
    // Details can be a whole sentence: keep it from pushing the numbers off screen (tooltip has it all).
    const int detailsMax = m_table->fontMetrics().averageCharWidth() * 48;
    if (m_table->columnWidth(ResultsModel::DetailsColumn) > detailsMax)
        m_table->setColumnWidth(ResultsModel::DetailsColumn, detailsMax);

    const kf::protocol::Header& h = report.header();
    const QString verdict = QString::fromLatin1(kf::protocol::verdictName(h.verdict));
    const QString who = QString::fromStdString((h.task.name.empty() ? "?" : h.task.name) + "/" +
                                               (h.candidate.file.empty() ? "?" : h.candidate.file));
    const auto level = h.isError() ? RunLogView::Level::Error
                       : h.verdict == kf::protocol::Verdict::Fail ? RunLogView::Level::Warning
                                             : RunLogView::Level::Info;
    QString line = QStringLiteral("%1: %2 %3").arg(who, QString::fromLatin1(kf::protocol::reportKindName(h.kind)), verdict);
    if (!h.summary.empty())
        line += QStringLiteral(" — ") + QString::fromStdString(h.summary);
    m_log->appendLine(level, line);
    if (const std::optional<ResultRow> san = reportrows::sanitizerRow(report)) {
        const auto state = san->sanitizer.state;
        m_log->appendLine(state == ResultRow::Sanitizer::State::Clean    ? RunLogView::Level::Info
                          : state == ResultRow::Sanitizer::State::NotRun ? RunLogView::Level::Warning
                                                                          : RunLogView::Level::Error,
                          who + QStringLiteral(": ") + san->sanitizer.sentence);
    }
}

void RunPanel::finish(bool ok, const QString& sentence)
{
    m_running = false;
    m_cancel->setEnabled(false);
    m_launch.clear();
    const RunVerdict verdict = RunVerdict::fromReports(m_runReports);
    Tone tone = verdict.tone;
    QString text = verdict.text;
    if (text.isEmpty()) {
        text = sentence.isEmpty() ? (ok ? tr("done") : tr("the run did not finish")) : sentence;
        tone = ok ? Tone::Good : Tone::Bad;
    } else if (!sentence.isEmpty()) {
        // The failure is often the error report's own sentence: say it once, with its hint.
        const QString error = QStringLiteral("ERROR · ");
        const QString said = text.startsWith(error) ? text.mid(error.size()) : QString();
        if (!said.isEmpty() && sentence.startsWith(said))
            text = error + sentence;
        else
            text += QStringLiteral(" · ") + sentence;
    }
    if (!ok && tone == Tone::Good)
        tone = Tone::Warning; // e.g. cancelled after some candidates passed
    if (ok) {
        m_progress->setValue(1000);
        m_progress->setFormat(QStringLiteral("100.0 %"));
    }
    m_stageName = ok ? tr("done") : sentence;
    updateStage();
    setBanner(tone, text);
    m_log->appendLine(tone == Tone::Bad ? RunLogView::Level::Error : tone == Tone::Warning ? RunLogView::Level::Warning
                                                                                         : RunLogView::Level::Info,
                      text);
}

void RunPanel::fail(const QString& sentence)
{
    m_running = false;
    m_cancel->setEnabled(false);
    m_launch.clear();
    m_stageName = tr("stopped");
    updateStage();
    setBanner(Tone::Bad, sentence);
    m_log->appendLine(RunLogView::Level::Error, sentence);
}

QString RunPanel::title() const
{
    return m_title->text();
}

QString RunPanel::bannerText() const
{
    return m_banner->text();
}

QString RunPanel::stageText() const
{
    return m_stage->text();
}

int RunPanel::progressPermille() const
{
    return m_progress->value();
}

void RunPanel::setBanner(Tone tone, const QString& text)
{
    m_bannerTone = tone;
    m_banner->setText(text);
    QPalette p = m_banner->palette();
    p.setColor(QPalette::WindowText, verdictstyle::color(tone, palette()));
    m_banner->setPalette(p);
}

void RunPanel::updateStage()
{
    m_stage->setText(m_launch.isEmpty() ? m_stageName : m_stageName + QStringLiteral(" · ") + m_launch);
}

void RunPanel::onCancelClicked()
{
    if (!m_running || !m_cancel->isEnabled())
        return;
    // Disabled at once: one request per run, and the user sees it was heard.
    m_cancel->setEnabled(false);
    m_stageName = tr("cancelling…");
    updateStage();
    m_log->appendLine(RunLogView::Level::Info, tr("cancel requested"));
    emit cancelRequested();
}

void RunPanel::onRowDoubleClicked(const QModelIndex& viewIndex)
{
    const int row = m_proxy->mapToSource(viewIndex).row();
    if (row < 0)
        return;
    if (const ResultRow& r = m_model->rowAt(row); r.canInspect())
        emit inspectRequested(row, r.correctness.caseDirs.first());
}

QMenu* RunPanel::createRowMenu(const QModelIndex& viewIndex)
{
    auto* menu = new QMenu(m_table);
    menu->setToolTipsVisible(true);
    const int row = m_proxy->mapToSource(viewIndex).row();
    QAction* inspect = menu->addAction(tr("Inspect tensors…"));
    if (row < 0)
        return menu;
    const ResultRow& r = m_model->rowAt(row);
    if (!r.canInspect()) {
        inspect->setEnabled(false);
        inspect->setToolTip(r.verdict() != ResultRow::Verdict::Fail || !r.correctness.present
                                ? tr("Only a shape that failed verification has tensors to inspect")
                                : tr("No tensors were saved for this shape: verify again with tensor dumps on "
                                     "to inspect its failing trials"));
        return menu;
    }
    const QStringList dirs = r.correctness.caseDirs;
    inspect->setToolTip(QDir::toNativeSeparators(dirs.first()));
    connect(inspect, &QAction::triggered, this, [this, row, dir = dirs.first()] { emit inspectRequested(row, dir); });
    // More than one failing trial saved: each can be opened.
    for (qsizetype i = 1; i < dirs.size(); ++i) {
        QAction* more = menu->addAction(tr("Inspect tensors of %1…").arg(QDir(dirs[i]).dirName()));
        more->setToolTip(QDir::toNativeSeparators(dirs[i]));
        connect(more, &QAction::triggered, this, [this, row, dir = dirs[i]] { emit inspectRequested(row, dir); });
    }
    return menu;
}

void RunPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        setBanner(m_bannerTone, m_banner->text());
        m_table->viewport()->update();
    }
}

} // namespace kf::ui
