#include "widgets/profile/ProfilePanel.h"
#include "engine/protocol/Verdict.h"

#include "engine/profile/Hints.h"
#include "widgets/profile/HintList.h"
#include "widgets/profile/MetricTableModel.h"
#include "widgets/profile/OccupancySection.h"
#include "widgets/profile/ProfileFormat.h"
#include "widgets/profile/ProfileSelection.h"
#include "widgets/profile/RooflineChart.h"
#include "widgets/profile/ThroughputSection.h"

#include <QBoxLayout>
#include <QClipboard>
#include <QComboBox>
#include <QEvent>
#include <QFrame>
#include <QGuiApplication>
#include <QLabel>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTableView>

#include <map>

namespace kf::ui {
namespace {

/// The string at `path` in `j`, or "" when any step is missing or not of the right type.
QString jsonText(const nlohmann::json& j, std::initializer_list<const char*> path)
{
    const nlohmann::json* at = &j;
    for (const char* step : path) {
        if (!at->is_object() || !at->contains(step))
            return {};
        at = &(*at)[step];
    }
    return at->is_string() ? QString::fromStdString(at->get<std::string>()) : QString();
}

/// Below this width the roofline and the hints are stacked.
constexpr int kWideInsightRow = 1000;

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

} // namespace

ProfilePanel::ProfilePanel(QWidget* parent)
    : QWidget(parent)
{
    buildUi();
    applyColors();
    clear();
}

ProfilePanel::~ProfilePanel() = default;

void ProfilePanel::setReport(const kf::profile::ProfileReport& report)
{
    const int previous = selectedKernel();
    std::string previousName;
    if (m_report && m_report->candidate && previous >= 0)
        previousName = m_report->candidate->kernels[static_cast<size_t>(previous)].name;
    m_report = report;
    m_busyRow->hide();
    m_pages->setEnabled(true);

    if (report.verdict == kf::protocol::Verdict::Error) {
        const nlohmann::json error = report.header.value("error", nlohmann::json::object());
        QStringList lines;
        lines << tr("The profile failed.");
        for (const char* key : {"what", "why", "hint"})
            if (const QString line = jsonText(error, {key}); !line.isEmpty())
                lines << line;
        if (lines.size() == 1 && !report.summary.empty())
            lines << QString::fromStdString(report.summary);
        m_metrics->clear();
        showMessage(lines.join(QLatin1Char('\n')), true);
        return;
    }
    if (!report.candidate || report.candidate->kernels.empty()) {
        m_metrics->clear();
        showMessage(tr("The profile has no candidate kernels: the launch plan ran none."), true);
        return;
    }

    showHeader(report);
    showCounterStatus(report.counters);
    m_summary->setText(QString::fromStdString(report.summary));
    m_summary->setVisible(!report.summary.empty());
    m_metrics->setReport(*m_report);

    const auto& kernels = m_report->candidate->kernels;
    const bool keep = previous >= 0 && previous < static_cast<int>(kernels.size())
                      && kernels[static_cast<size_t>(previous)].name == previousName;
    fillKernelCombo(keep ? previous : -1);
    showSelection();
    m_message.clear();
    m_messageIsError = false;
    m_pages->setCurrentWidget(m_scroll);
    updateRows();
}

void ProfilePanel::clear(const QString& why)
{
    m_report.reset();
    m_busyRow->hide();
    m_pages->setEnabled(true);
    m_metrics->clear();
    m_occupancy->clear();
    m_throughput->clear();
    m_roofline->clearData();
    m_hints->setHints({}, QString());
    m_updating = true;
    m_kernelCombo->clear();
    m_updating = false;
    showMessage(why.isEmpty() ? tr("No profile yet. Profiling replays one launch of the candidate (and the "
                                   "baseline) under the CUPTI profiler and shows the counters here.")
                              : why,
                false);
}

void ProfilePanel::setBusy(const QString& message)
{
    m_busyLabel->setText(message);
    m_busyRow->show();
    // The last numbers stay for comparison, greyed so nobody mistakes them for the new ones.
    m_pages->setEnabled(false);
}

void ProfilePanel::setError(const QString& message)
{
    m_report.reset();
    m_busyRow->hide();
    m_pages->setEnabled(true);
    m_metrics->clear();
    showMessage(message, true);
}

bool ProfilePanel::isBusy() const
{
    return !m_busyRow->isHidden();
}

QString ProfilePanel::messageText() const
{
    return m_message;
}

int ProfilePanel::selectedKernel() const
{
    const int index = m_kernelCombo->currentIndex();
    if (index >= 0)
        return m_kernelCombo->itemData(index).toInt();
    // One kernel: no choice offered, the sections show it.
    return m_report && m_report->candidate && m_report->candidate->kernels.size() == 1 ? 0 : -1;
}

void ProfilePanel::selectKernel(int index)
{
    const int at = m_kernelCombo->findData(index);
    if (at >= 0)
        m_kernelCombo->setCurrentIndex(at);
}

void ProfilePanel::showMessage(const QString& text, bool isError)
{
    m_message = text;
    m_messageIsError = isError;
    m_messageLabel->setText(text);
    m_pages->setCurrentWidget(m_messageLabel);
    applyColors();
}

void ProfilePanel::showHeader(const kf::profile::ProfileReport& r)
{
    QString first = QStringLiteral("<b>%1</b>").arg(esc(jsonText(r.header, {"task", "name"})));
    if (const QString file = jsonText(r.header, {"candidate", "file"}); !file.isEmpty())
        first += QStringLiteral(" · ") + esc(file);
    QStringList dims;
    for (const auto& [name, value] : r.shape)
        dims << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
    if (!dims.isEmpty() || !r.label.empty()) {
        QString shape = r.label.empty() ? tr("shape") : tr("shape “%1”").arg(esc(QString::fromStdString(r.label)));
        if (!dims.isEmpty())
            shape += QStringLiteral(" ") + esc(dims.join(QStringLiteral(", ")));
        if (!r.set.empty())
            shape += QStringLiteral(" (%1)").arg(esc(QString::fromStdString(r.set)));
        first += QStringLiteral(" — ") + shape;
    }
    QStringList device;
    if (!r.gpu().empty())
        device << esc(QString::fromStdString(r.gpu()));
    if (!r.counters.chip.empty())
        device << esc(QString::fromStdString(r.counters.chip));
    if (!r.arch().empty())
        device << esc(QString::fromStdString(r.arch()));
    if (r.counters.available && r.counters.passes > 0)
        device << (r.counters.passes == 1 ? tr("1 replay pass") : tr("%1 replay passes").arg(r.counters.passes))
                      + QStringLiteral(", ") + tr("%1 replay").arg(esc(QString::fromStdString(r.counters.replay)));
    m_header->setText(first + QStringLiteral("<br>") + device.join(QStringLiteral(" · ")));
}

void ProfilePanel::showCounterStatus(const kf::profile::CounterStatus& c)
{
    m_banner->setVisible(!c.available);
    m_problem->setText(c.problem.empty() ? tr("The report carries no counters and does not say why.")
                                         : QString::fromStdString(c.problem));
    m_howTo->setText(tr("To enable: %1").arg(QString::fromStdString(c.howToEnable)));
    m_howTo->setVisible(!c.howToEnable.empty());
    QStringList missing;
    for (const std::string& key : c.unsupported)
        missing << QString::fromStdString(key);
    m_unsupported->setText(tr("%1 does not report %2 (shown as —).")
                               .arg(c.chip.empty() ? tr("This GPU") : QString::fromStdString(c.chip),
                                    missing.join(QStringLiteral(", "))));
    m_unsupported->setVisible(c.available && !missing.isEmpty());
}

void ProfilePanel::fillKernelCombo(int keepIndex)
{
    const auto& side = *m_report->candidate;
    m_updating = true;
    m_kernelCombo->clear();
    if (side.kernels.size() > 1) {
        m_kernelCombo->addItem(tr("All %1 kernels").arg(side.kernels.size()), -1);
        for (size_t i = 0; i < side.kernels.size(); ++i) {
            const kf::profile::KernelRecord& k = side.kernels[i];
            QString text = QStringLiteral("%1. %2").arg(i + 1).arg(shortKernelName(k));
            const auto ns = k.metric(kf::profile::key::kDuration);
            if (ns && side.totals.durationNs > 0)
                text += tr(" — %1 of the time").arg(percentText(100.0 * *ns / side.totals.durationNs));
            m_kernelCombo->addItem(text, static_cast<int>(i));
            m_kernelCombo->setItemData(m_kernelCombo->count() - 1,
                                       QString::fromStdString(k.demangled.empty() ? k.name : k.demangled), Qt::ToolTipRole);
        }
        m_kernelCombo->setCurrentIndex(std::max(0, m_kernelCombo->findData(keepIndex)));
    }
    m_kernelRow->setVisible(side.kernels.size() > 1);
    m_updating = false;
}

void ProfilePanel::showSelection()
{
    if (!m_report || !m_report->candidate)
        return;
    const kf::profile::ProfileReport& r = *m_report;
    const int index = selectedKernel();
    const ProfileSelection candidate = index < 0 || r.candidate->kernels.size() == 1
                                           ? ProfileSelection::forSide(*r.candidate, tr("candidate"))
                                           : ProfileSelection::forKernel(*r.candidate, index, tr("candidate"));
    std::optional<ProfileSelection> baseline;
    if (r.baseline && !r.baseline->kernels.empty())
        baseline = ProfileSelection::forSide(*r.baseline, tr("baseline"));
    const QString why = r.counters.available ? QString() : tr("no hardware counters (see the note at the top)");

    m_occupancy->setSelection(candidate, baseline ? &*baseline : nullptr, why);
    m_throughput->setSelection(candidate, baseline ? &*baseline : nullptr, r.ceilings, why);

    std::vector<RooflineInput> inputs;
    inputs.push_back({RooflineInput::Role::Candidate, tr("candidate"), r.candidate->totals});
    if (baseline)
        inputs.push_back({RooflineInput::Role::Baseline, tr("baseline"), r.baseline->totals});
    if (!candidate.wholeSide)
        inputs.push_back({RooflineInput::Role::Kernel, shortKernelName(*candidate.kernel), candidate.totals});
    Roofline roofline = Roofline::compute(r.ceilings, inputs);
    QStringList notes = roofline.notes;
    if (!r.counters.available)
        notes = {tr("No points without hardware counters; the ceilings are the device's.")};
    if (roofline.ceilings.empty())
        notes << tr("The report names no ceilings for this device.");
    m_rooflineNotes->setText(notes.join(QLatin1Char('\n')));
    m_rooflineNotes->setVisible(!notes.isEmpty());
    m_roofline->setRoofline(std::move(roofline));

    m_hints->setHints(kf::profile::hintsFor(r), r.counters.available
                                                     ? tr("Nothing in these numbers calls for a change.")
                                                     : tr("No hints from the static numbers; the counters would give more."));
}

void ProfilePanel::updateRows()
{
    if (!m_numbersRow || !m_scroll)
        return;
    const int width = m_scroll->viewport()->width();
    const int spacing = 24; // margins and the gap between two boxes
    const int numbers = m_occupancy->minimumSizeHint().width() + m_throughput->minimumSizeHint().width() + spacing;
    const auto numbersDirection = width >= numbers ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
    if (m_numbersRow->direction() != numbersDirection)
        m_numbersRow->setDirection(numbersDirection);
    // The roofline wants width more than anything: beside the hints only on a wide panel.
    const auto insightDirection = width >= kWideInsightRow ? QBoxLayout::RightToLeft : QBoxLayout::TopToBottom;
    if (m_insightRow->direction() != insightDirection)
        m_insightRow->setDirection(insightDirection);
}

void ProfilePanel::copySelectedCells()
{
    const QModelIndexList selected = m_table->selectionModel()->selectedIndexes();
    if (selected.isEmpty())
        return;
    // Rows and columns of the selection, in table order, as tab-separated text with the heads.
    std::map<int, std::map<int, QString>> cells;
    std::map<int, bool> columns;
    // Exact numbers, not the rounded display text: a copy goes into a spreadsheet or a bug report.
    for (const QModelIndex& i : selected) {
        const QVariant raw = i.data(MetricTableModel::ValueRole);
        cells[i.row()][i.column()] = i.column() == 0 ? i.data(Qt::DisplayRole).toString()
                                     : raw.isValid() ? QString::number(raw.toDouble(), 'g', 15)
                                                     : QString();
        columns[i.column()] = true;
    }
    QStringList lines;
    QStringList head;
    for (const auto& [column, unused] : columns)
        head << m_metrics->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
    lines << head.join(QLatin1Char('\t'));
    for (const auto& [row, values] : cells) {
        QStringList line;
        for (const auto& [column, unused] : columns) {
            const auto it = values.find(column);
            line << (it == values.end() ? QString() : it->second);
        }
        lines << line.join(QLatin1Char('\t'));
    }
    QGuiApplication::clipboard()->setText(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
}

void ProfilePanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    updateRows();
}

void ProfilePanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyColors();
}

} // namespace kf::ui
