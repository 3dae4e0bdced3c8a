// ProfilePanel's widgets and layout; the behaviour is in ProfilePanel.cpp.
#include "widgets/profile/HintList.h"
#include "widgets/profile/MetricTableModel.h"
#include "widgets/profile/OccupancySection.h"
#include "widgets/common/SelectableLabel.h"
#include "widgets/common/StatusColors.h"
#include "widgets/profile/ProfileColors.h"
#include "widgets/profile/ProfilePanel.h"
#include "widgets/profile/RooflineChart.h"
#include "widgets/profile/ThroughputSection.h"

#include <QAction>
#include <QComboBox>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace kf::ui {
namespace {

// The profile panel's texts can be selected from the keyboard as well.
constexpr Qt::TextInteractionFlags kSelectable = Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard;

} // namespace

void ProfilePanel::buildUi()
{
    buildBusyRow();

    m_messageLabel = selectableLabel(QStringLiteral("messageLabel"), this, kSelectable);
    m_messageLabel->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_messageLabel->setMargin(8);

    auto* content = new QWidget;
    content->setObjectName(QStringLiteral("profileContent"));
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(buildHeader());

    // The numbers first (occupancy beside throughput), then the hints and the roofline. Each
    // row is side by side when the dock is wide enough and stacked otherwise (updateRows).
    m_occupancy = new OccupancySection(content);
    m_throughput = new ThroughputSection(content);
    m_numbersRow = new QBoxLayout(QBoxLayout::LeftToRight);
    m_numbersRow->addWidget(m_occupancy, 1, Qt::AlignTop);
    m_numbersRow->addWidget(m_throughput, 1, Qt::AlignTop);
    layout->addLayout(m_numbersRow);

    QGroupBox* rooflineBox = buildRoofline(content);
    auto* hintsBox = new QGroupBox(tr("Hints"), content);
    hintsBox->setObjectName(QStringLiteral("hintsSection"));
    m_hints = new HintList(hintsBox);
    m_hints->setObjectName(QStringLiteral("hintList"));
    auto* hintsLayout = new QVBoxLayout(hintsBox);
    hintsLayout->addWidget(m_hints);

    // Hints come first when stacked (short, and what to do next); side by side, right to left
    // puts the roofline on the left where the eye starts.
    m_insightRow = new QBoxLayout(QBoxLayout::TopToBottom);
    m_insightRow->addWidget(hintsBox, 2);
    m_insightRow->addWidget(rooflineBox, 3);
    layout->addLayout(m_insightRow);
    layout->addWidget(buildDetails());
    layout->addStretch(1);

    m_scroll = new QScrollArea(this);
    m_scroll->setObjectName(QStringLiteral("profileScroll"));
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_scroll->setWidget(content);

    m_pages = new QStackedWidget(this);
    m_pages->addWidget(m_messageLabel);
    m_pages->addWidget(m_scroll);

    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(2);
    outer->addWidget(m_busyRow);
    outer->addWidget(m_pages, 1);
}

// The busy row above the pages: an indeterminate bar and what is being profiled.
void ProfilePanel::buildBusyRow()
{
    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0); // indeterminate: the runner reports no progress within a profile
    m_busyBar->setMaximumWidth(120);
    m_busyBar->setTextVisible(false);
    m_busyLabel = new QLabel(this);
    m_busyLabel->setObjectName(QStringLiteral("busyLabel"));
    m_busyLabel->setWordWrap(true);
    m_busyRow = new QWidget(this);
    m_busyRow->setObjectName(QStringLiteral("busyRow"));
    auto* busy = new QHBoxLayout(m_busyRow);
    busy->setContentsMargins(0, 0, 0, 0);
    busy->addWidget(m_busyBar);
    busy->addWidget(m_busyLabel, 1);
    m_busyRow->hide();
}

// The roofline chart with its notes below.
QGroupBox* ProfilePanel::buildRoofline(QWidget* content)
{
    auto* rooflineBox = new QGroupBox(tr("Roofline"), content);
    rooflineBox->setObjectName(QStringLiteral("rooflineSection"));
    m_roofline = new RooflineChart(rooflineBox);
    m_roofline->setObjectName(QStringLiteral("rooflineChart"));
    m_roofline->setMinimumHeight(280);
    m_rooflineNotes = new QLabel(rooflineBox);
    m_rooflineNotes->setObjectName(QStringLiteral("rooflineNotes"));
    m_rooflineNotes->setWordWrap(true);
    QFont small = m_rooflineNotes->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_rooflineNotes->setFont(small);
    auto* rooflineLayout = new QVBoxLayout(rooflineBox);
    rooflineLayout->setContentsMargins(4, 4, 4, 4);
    rooflineLayout->addWidget(m_roofline, 1);
    rooflineLayout->addWidget(m_rooflineNotes);
    return rooflineBox;
}

QWidget* ProfilePanel::buildHeader()
{
    auto* box = new QWidget;
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);

    m_header = selectableLabel(QStringLiteral("profileHeader"), box, kSelectable);
    m_header->setTextFormat(Qt::RichText);
    layout->addWidget(m_header);

    m_banner = new QFrame(box);
    m_banner->setObjectName(QStringLiteral("counterBanner"));
    m_banner->setAccessibleName(tr("hardware counters unavailable"));
    m_bannerTitle = new QLabel(tr("Hardware counters unavailable: the static numbers below are still exact, "
                                  "and verification and timing work as before."),
                               m_banner);
    m_bannerTitle->setObjectName(QStringLiteral("counterBannerTitle"));
    m_bannerTitle->setWordWrap(true);
    QFont bold = m_bannerTitle->font();
    bold.setBold(true);
    m_bannerTitle->setFont(bold);
    m_problem = selectableLabel(QStringLiteral("counterProblem"), m_banner, kSelectable);
    m_howTo = selectableLabel(QStringLiteral("counterHowTo"), m_banner, kSelectable);
    auto* bannerLayout = new QVBoxLayout(m_banner);
    bannerLayout->setContentsMargins(8, 6, 8, 6);
    bannerLayout->setSpacing(3);
    bannerLayout->addWidget(m_bannerTitle);
    bannerLayout->addWidget(m_problem);
    bannerLayout->addWidget(m_howTo);
    layout->addWidget(m_banner);

    m_unsupported = selectableLabel(QStringLiteral("counterUnsupported"), box, kSelectable);
    layout->addWidget(m_unsupported);
    m_summary = selectableLabel(QStringLiteral("profileSummary"), box, kSelectable);
    layout->addWidget(m_summary);

    m_kernelRow = new QWidget(box);
    m_kernelCombo = new QComboBox(m_kernelRow);
    m_kernelCombo->setObjectName(QStringLiteral("kernelCombo"));
    m_kernelCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_kernelCombo->setMinimumContentsLength(24);
    m_kernelCombo->setToolTip(tr("the candidate kernel the sections show; the baseline column always covers all "
                                 "of the baseline's kernels"));
    auto* kernelLabel = new QLabel(tr("&Kernel"), m_kernelRow);
    kernelLabel->setBuddy(m_kernelCombo);
    auto* row = new QHBoxLayout(m_kernelRow);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(kernelLabel);
    row->addWidget(m_kernelCombo, 1);
    layout->addWidget(m_kernelRow);
    connect(m_kernelCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (m_updating || index < 0)
            return;
        showSelection();
        emit kernelSelected(selectedKernel());
    });
    return box;
}

QWidget* ProfilePanel::buildDetails()
{
    auto* box = new QWidget;
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    m_detailsToggle = new QToolButton(box);
    m_detailsToggle->setObjectName(QStringLiteral("detailsToggle"));
    m_detailsToggle->setText(tr("All metrics, per kernel"));
    m_detailsToggle->setCheckable(true);
    m_detailsToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_detailsToggle->setArrowType(Qt::RightArrow);
    m_detailsToggle->setAutoRaise(true);

    m_metrics = new MetricTableModel(this);
    m_table = new QTableView(box);
    m_table->setObjectName(QStringLiteral("metricTable"));
    m_table->setModel(m_metrics);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setMinimumHeight(260);
    m_table->setWordWrap(false);
    m_table->hide();
    auto* copy = new QAction(tr("Copy"), m_table);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    connect(copy, &QAction::triggered, this, &ProfilePanel::copySelectedCells);
    m_table->addAction(copy);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);

    connect(m_detailsToggle, &QToolButton::toggled, this, [this](bool open) {
        m_detailsToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        m_table->setVisible(open);
    });
    layout->addWidget(m_detailsToggle, 0, Qt::AlignLeft);
    layout->addWidget(m_table);
    return box;
}

void ProfilePanel::applyColors()
{
    const QColor warning = warningColor(palette());
    // A faint wash of the warning colour: the banner must be noticed, not shout over the numbers.
    m_banner->setStyleSheet(QStringLiteral("QFrame#counterBanner { border: 1px solid %1; border-radius: 3px; "
                                           "background: rgba(%2, %3, %4, 28); }")
                                .arg(warning.name())
                                .arg(warning.red())
                                .arg(warning.green())
                                .arg(warning.blue()));
    QPalette title = m_bannerTitle->palette();
    title.setColor(QPalette::WindowText, warning);
    m_bannerTitle->setPalette(title);
    QPalette message = m_messageLabel->palette();
    message.setColor(QPalette::WindowText, m_messageIsError ? errorColor(palette())
                                                            : palette().color(QPalette::WindowText));
    m_messageLabel->setPalette(message);
}

} // namespace kf::ui
