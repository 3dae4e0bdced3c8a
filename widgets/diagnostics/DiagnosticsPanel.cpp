#include "widgets/diagnostics/DiagnosticsPanel.h"

#include "widgets/diagnostics/DiagnosticsModel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {

namespace {

using Severity = kf::Diagnostic::Severity;

QString counted(int n, const QString& one, const QString& many)
{
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QToolButton* filterButton(QWidget* parent, QStyle::StandardPixmap icon, const QString& tip)
{
    auto* button = new QToolButton(parent);
    button->setCheckable(true);
    button->setChecked(true);
    button->setAutoRaise(true);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setIcon(parent->style()->standardIcon(icon));
    button->setToolTip(tip);
    return button;
}

} // namespace

DiagnosticsPanel::DiagnosticsPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new DiagnosticsModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_view(new QTableView(this))
    , m_summary(new QLabel(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(DiagnosticsModel::SortRole);
    m_proxy->setFilterRole(DiagnosticsModel::SeverityRole);
    m_proxy->setFilterKeyColumn(DiagnosticsModel::Severity);

    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(DiagnosticsModel::Line, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setAlternatingRowColors(true);
    m_view->setShowGrid(false);
    // The message wraps within the panel's width: never a sideways scroll to read an error.
    m_view->setWordWrap(true);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* header = m_view->horizontalHeader();
    header->setHighlightSections(false);
    header->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    header->setStretchLastSection(true);
    for (int c : {DiagnosticsModel::Severity, DiagnosticsModel::Line, DiagnosticsModel::ColumnNumber, DiagnosticsModel::Code})
        header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    // The file and the source get what they need within a budget (fitFileColumn); the message
    // takes the rest and wraps.
    header->setSectionResizeMode(DiagnosticsModel::File, QHeaderView::Fixed);
    header->setSectionResizeMode(DiagnosticsModel::Source, QHeaderView::Fixed);
    header->setSectionResizeMode(DiagnosticsModel::Message, QHeaderView::Stretch);
    header->setMinimumSectionSize(24);
    m_view->installEventFilter(this);
    m_view->viewport()->installEventFilter(this);
    connect(m_view, &QTableView::clicked, this, &DiagnosticsPanel::activate);

    m_errors = filterButton(this, QStyle::SP_MessageBoxCritical, tr("Show errors"));
    m_warnings = filterButton(this, QStyle::SP_MessageBoxWarning, tr("Show warnings"));
    m_infos = filterButton(this, QStyle::SP_MessageBoxInformation, tr("Show remarks and notes"));
    for (auto* button : {m_errors, m_warnings, m_infos})
        connect(button, &QToolButton::toggled, this, &DiagnosticsPanel::updateFilter);

    auto* top = new QHBoxLayout;
    top->setContentsMargins(6, 2, 6, 2);
    top->addWidget(m_summary, 1);
    top->addWidget(m_errors);
    top->addWidget(m_warnings);
    top->addWidget(m_infos);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);

    connect(m_model, &QAbstractItemModel::modelReset, this, &DiagnosticsPanel::updateSummary);
    connect(m_model, &QAbstractItemModel::modelReset, this, &DiagnosticsPanel::fitFileColumn);
    updateSummary();
}

void DiagnosticsPanel::setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics)
{
    m_model->setDiagnostics(diagnostics);
}

void DiagnosticsPanel::setBaseDirectory(const QString& dir)
{
    m_model->setBaseDirectory(dir);
}

QString DiagnosticsPanel::summary() const
{
    return m_summary->text();
}

void DiagnosticsPanel::setSeverityVisible(Severity severity, bool visible)
{
    switch (severity) {
    case Severity::Error: m_errors->setChecked(visible); break;
    case Severity::Warning: m_warnings->setChecked(visible); break;
    case Severity::Remark:
    case Severity::Note: m_infos->setChecked(visible); break;
    }
}

void DiagnosticsPanel::updateSummary()
{
    const int errors = m_model->count(Severity::Error);
    const int warnings = m_model->count(Severity::Warning);
    const int remarks = m_model->count(Severity::Remark);
    const int notes = m_model->count(Severity::Note);
    QStringList parts;
    if (errors)
        parts << counted(errors, tr("error"), tr("errors"));
    if (warnings)
        parts << counted(warnings, tr("warning"), tr("warnings"));
    if (remarks)
        parts << counted(remarks, tr("remark"), tr("remarks"));
    if (notes)
        parts << counted(notes, tr("note"), tr("notes"));
    m_summary->setText(parts.isEmpty() ? tr("No problems") : parts.join(QStringLiteral(", ")));

    m_errors->setText(QString::number(errors));
    m_warnings->setText(QString::number(warnings));
    m_infos->setText(QString::number(remarks + notes));
}

void DiagnosticsPanel::updateFilter()
{
    QStringList shown;
    if (m_errors->isChecked())
        shown << QStringLiteral("error");
    if (m_warnings->isChecked())
        shown << QStringLiteral("warning");
    if (m_infos->isChecked())
        shown << QStringLiteral("remark") << QStringLiteral("note");
    // An empty alternation would match everything; match nothing instead.
    m_proxy->setFilterRegularExpression(
        shown.isEmpty() ? QRegularExpression(QStringLiteral("$^"))
                        : QRegularExpression(QStringLiteral("^(%1)$").arg(shown.join(u'|'))));
}

void DiagnosticsPanel::activate(const QModelIndex& proxyIndex)
{
    if (!proxyIndex.isValid())
        return;
    const auto& d = m_model->diagnosticAt(m_proxy->mapToSource(proxyIndex).row());
    emit diagnosticActivated(QString::fromStdString(d.file), d.line, d.column);
}

void DiagnosticsPanel::fitFileColumn()
{
    // The message keeps at least 40 % of the width; the file and the source share what the short
    // columns leave, elided in the middle when they need more.
    QHeaderView* header = m_view->horizontalHeader();
    const QFontMetrics metrics = m_view->fontMetrics();
    auto wanted = [&](int column) {
        int w = header->sectionSizeHint(column);
        for (int row = 0; row < m_model->rowCount(); ++row)
            w = std::max(w, metrics.horizontalAdvance(m_model->index(row, column).data().toString()) + 16);
        return w;
    };
    const int width = m_view->viewport()->width();
    int fixed = 0;
    for (int c : {DiagnosticsModel::Severity, DiagnosticsModel::Line, DiagnosticsModel::ColumnNumber, DiagnosticsModel::Code})
        fixed += header->sectionSize(c);
    const int budget = std::max(0, width - width * 4 / 10 - fixed);
    int file = wanted(DiagnosticsModel::File), source = wanted(DiagnosticsModel::Source);
    if (file + source > budget) {
        source = std::min(source, std::max(48, budget * 3 / 10));
        file = std::max(60, budget - source);
    }
    header->resizeSection(DiagnosticsModel::Source, source);
    header->resizeSection(DiagnosticsModel::File, file);
}

bool DiagnosticsPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_view->viewport() && event->type() == QEvent::Resize)
        fitFileColumn();
    if (watched == m_view && event->type() == QEvent::KeyPress) {
        const auto key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Return || key == Qt::Key_Enter) {
            activate(m_view->currentIndex());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace kf::ui
