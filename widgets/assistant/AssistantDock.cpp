#include "widgets/assistant/AssistantDock.h"

#include "widgets/common/SelectableLabel.h"
#include "widgets/common/SpinBox.h"
#include "widgets/common/StatusColors.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QFrame>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTextCursor>
#include <QTextDocument>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace kf::ui {

namespace {

constexpr int kTextRepaintMs = 50; // at most 20 repaints a second while the model streams

QColor stageColor(const QString& status, const QPalette& p)
{
    if (status == QLatin1String("running"))
        return QColor(0x2f, 0x80, 0xed);
    if (status == QLatin1String("done"))
        return isDarkPalette(p) ? QColor(0x3f, 0xa3, 0x5b) : QColor(0x1e, 0x8e, 0x3e);
    if (status == QLatin1String("failed"))
        return errorColor(p);
    if (status == QLatin1String("cancelled") || status == QLatin1String("stopped"))
        return warningColor(p);
    return p.color(QPalette::Disabled, QPalette::WindowText); // pending, skipped
}

QString stageGlyph(const QString& status)
{
    if (status == QLatin1String("running"))
        return QStringLiteral("●");
    if (status == QLatin1String("done"))
        return QStringLiteral("✓");
    if (status == QLatin1String("failed"))
        return QStringLiteral("✗");
    if (status == QLatin1String("skipped"))
        return QStringLiteral("–");
    if (status == QLatin1String("cancelled") || status == QLatin1String("stopped"))
        return QStringLiteral("■");
    return QStringLiteral("○");
}

// `a` with a share `t` of `b`: a tint that keeps the theme's contrast.
QColor blend(const QColor& a, const QColor& b, double t)
{
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

QPlainTextEdit* monoBox(QWidget* parent, bool readOnly)
{
    auto* e = new QPlainTextEdit(parent);
    e->setReadOnly(readOnly);
    e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return e;
}

} // namespace

const QStringList& AssistantDock::stageNames()
{
    static const QStringList names{QStringLiteral("interview"), QStringLiteral("codegen"), QStringLiteral("correctness"),
                                   QStringLiteral("performance"), QStringLiteral("polish")};
    return names;
}

AssistantDock::AssistantDock(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("assistant"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    buildRequest(layout);
    buildLimits(layout);
    m_target = new QLabel(this);
    m_target->setWordWrap(true);
    m_target->setVisible(false);
    layout->addWidget(m_target);

    buildStages(layout);
    layout->addWidget(buildProgress(), 1);
    m_totals = new QLabel(this);
    m_totals->setObjectName(QStringLiteral("assistantTotals"));
    layout->addWidget(m_totals);
    m_outcome = selectableLabel(QStringLiteral("assistantOutcome"), this);
    layout->addWidget(m_outcome);
    setTotals(0, 0, 0);

    wireSignals();
    setModels({}, {});
}

void AssistantDock::buildRequest(QVBoxLayout* layout)
{
    m_request = new QPlainTextEdit(this);
    m_request->setObjectName(QStringLiteral("assistantRequest"));
    m_request->setPlaceholderText(tr("Describe the kernel: \"a fused softmax over the last axis of a float32 [B, D] "
                                     "tensor, D up to 8192\". With a task open (the current tab's) or selected in the "
                                     "Workspace, the request is about that task; otherwise you choose an empty folder "
                                     "for a new one."));
    m_request->setMaximumHeight(fontMetrics().lineSpacing() * 4 + 12);
    m_request->setTabChangesFocus(true);
    layout->addWidget(m_request);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Model:"), this));
    m_model = new QComboBox(this);
    m_model->setObjectName(QStringLiteral("assistantModel"));
    m_model->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    row->addWidget(m_model, 1);
    m_start = new QPushButton(tr("&Start"), this);
    m_start->setObjectName(QStringLiteral("assistantStart"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("assistantCancel"));
    m_cancel->setEnabled(false);
    row->addWidget(m_start);
    row->addWidget(m_cancel);
    layout->addLayout(row);
}

// The run's limits (docs/synthesis.md, "Budgets and escalation"): the CLI's defaults.
void AssistantDock::buildLimits(QVBoxLayout* layout)
{
    auto* limits = new QHBoxLayout;
    limits->addWidget(new QLabel(tr("Attempts per stage:"), this));
    m_attempts = rangeSpinBox(QStringLiteral("assistantAttempts"), this, 1, 50);
    m_attempts->setValue(4);
    m_attempts->setToolTip(tr("Model replies per stage before the run gives up on that stage"));
    limits->addWidget(m_attempts);
    limits->addWidget(new QLabel(tr("Faster rounds:"), this));
    m_perfRounds = rangeSpinBox(QStringLiteral("assistantPerfRounds"), this, 0, 50);
    m_perfRounds->setValue(3);
    m_perfRounds->setToolTip(tr("Faster versions asked for once a kernel is correct (0: none)"));
    limits->addWidget(m_perfRounds);
    limits->addWidget(new QLabel(tr("Budget:"), this));
    m_budget = new QDoubleSpinBox(this);
    m_budget->setObjectName(QStringLiteral("assistantBudget"));
    m_budget->setRange(0, 10000);
    m_budget->setDecimals(2);
    m_budget->setPrefix(QStringLiteral("$"));
    m_budget->setSpecialValueText(tr("no limit"));
    m_budget->setToolTip(tr("Stop when the run has cost this much, from the prices in Settings ▸ Models"));
    limits->addWidget(m_budget);
    limits->addStretch(1);
    layout->addLayout(limits);
}

void AssistantDock::buildStages(QVBoxLayout* layout)
{
    auto* stages = new QHBoxLayout;
    stages->setSpacing(4);
    for (const QString& s : stageNames()) {
        auto* chip = new QLabel(this);
        chip->setObjectName(QStringLiteral("stage_") + s);
        chip->setAlignment(Qt::AlignCenter);
        chip->setMinimumWidth(10);
        stages->addWidget(chip, 1);
        m_stageChips << chip;
        m_stageStatus << QStringLiteral("pending");
    }
    layout->addLayout(stages);
    for (const QString& s : stageNames())
        setStageStatus(s, QStringLiteral("pending"));

}

// Conversation, streamed text and candidates share the height.
QWidget* AssistantDock::buildProgress()
{
    auto* split = new QSplitter(Qt::Vertical, this);
    m_conversation = new QWidget;
    m_conversationLayout = new QVBoxLayout(m_conversation);
    m_conversationLayout->setContentsMargins(2, 2, 2, 2);
    m_conversationLayout->addStretch(1);
    m_conversationScroll = new QScrollArea(split);
    m_conversationScroll->setObjectName(QStringLiteral("assistantConversation"));
    m_conversationScroll->setWidget(m_conversation);
    m_conversationScroll->setWidgetResizable(true);
    m_conversationScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    split->addWidget(m_conversationScroll);

    m_stream = monoBox(split, true);
    m_stream->setObjectName(QStringLiteral("assistantStream"));
    m_stream->setPlaceholderText(tr("The model's reply appears here as it streams."));
    m_stream->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    split->addWidget(m_stream);

    m_candidates = new QTreeWidget(split);
    m_candidates->setObjectName(QStringLiteral("assistantCandidates"));
    m_candidates->setRootIsDecorated(false);
    m_candidates->setHeaderLabels({tr("Candidate"), tr("Speedup"), tr("Result")});
    m_candidates->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_candidates->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_candidates->header()->setStretchLastSection(true);
    m_candidates->setToolTip(tr("Every kernel the model sent, from the run folder. Double-click opens it."));
    split->addWidget(m_candidates);
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    split->setSizes({5000, 3000, 1600}); // relative: the conversation first
    split->setChildrenCollapsible(false);
    return split;
}

void AssistantDock::wireSignals()
{
    m_textTimer = new QTimer(this);
    m_textTimer->setSingleShot(true);
    m_textTimer->setInterval(kTextRepaintMs);
    connect(m_textTimer, &QTimer::timeout, this, &AssistantDock::flushText);

    connect(m_start, &QPushButton::clicked, this, [this] { emit startRequested(request(), modelName()); });
    connect(m_cancel, &QPushButton::clicked, this, &AssistantDock::cancelRequested);
    connect(m_request, &QPlainTextEdit::textChanged, this, &AssistantDock::updateStartEnabled);
    connect(m_candidates, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        emit candidateActivated(item->data(0, Qt::UserRole).toString());
    });
}

void AssistantDock::setModels(const QStringList& names, const QString& preselect, const QString& problem)
{
    // The user's choice survives a reload (Settings closed) while it is still listed.
    const QString chosen = m_model->currentText();
    m_model->clear();
    m_model->addItems(names);
    const int i = names.contains(chosen) ? m_model->findText(chosen) : m_model->findText(preselect);
    if (i >= 0)
        m_model->setCurrentIndex(i);
    m_haveModels = !names.isEmpty();
    m_model->setEnabled(m_haveModels && !m_running);
    QString tip;
    if (!problem.isEmpty())
        tip = problem;
    else if (!m_haveModels)
        tip = tr("No model is configured: add one in File ▸ Settings ▸ Models.");
    m_model->setToolTip(tip);
    if (!tip.isEmpty() && !m_running)
        setOutcome(tip, false);
    else if (m_outcome->text() == tr("No model is configured: add one in File ▸ Settings ▸ Models."))
        setOutcome({}, false);
    updateStartEnabled();
}

QString AssistantDock::request() const { return m_request->toPlainText().trimmed(); }
void AssistantDock::setRequest(const QString& text) { m_request->setPlainText(text); }
QString AssistantDock::modelName() const { return m_model->currentText(); }
int AssistantDock::maxAttempts() const { return m_attempts->value(); }
int AssistantDock::perfRounds() const { return m_perfRounds->value(); }
double AssistantDock::budgetUsd() const { return m_budget->value(); }

void AssistantDock::updateStartEnabled()
{
    m_start->setEnabled(!m_running && m_haveModels && !request().isEmpty());
}

void AssistantDock::beginRun(const QString& target)
{
    while (m_conversationLayout->count() > 1) {
        QLayoutItem* item = m_conversationLayout->takeAt(0);
        delete item->widget();
        delete item;
    }
    m_answerBoxes.clear();
    m_sendAnswers = m_chooseForMe = m_accept = m_reject = nullptr;
    m_pendingText.clear();
    m_streamText.clear();
    m_stream->clear();
    m_candidates->clear();
    for (const QString& s : stageNames())
        setStageStatus(s, QStringLiteral("pending"));
    setTotals(0, 0, 0);
    setOutcome({}, false);
    m_target->setText(tr("Working on %1").arg(target));
    m_target->setVisible(!target.isEmpty());
    addBubble(tr("You"), request(), QStringLiteral("you"));
}

void AssistantDock::setRunning(bool running)
{
    m_running = running;
    m_cancel->setEnabled(running);
    m_request->setReadOnly(running);
    m_model->setEnabled(!running && m_haveModels);
    m_attempts->setEnabled(!running);
    m_perfRounds->setEnabled(!running);
    m_budget->setEnabled(!running);
    if (!running)
        flushText();
    updateStartEnabled();
}

void AssistantDock::setStageStatus(const QString& stage, const QString& status, const QString& reason)
{
    const int i = stageNames().indexOf(stage);
    if (i < 0)
        return;
    m_stageStatus[i] = status;
    QLabel* chip = m_stageChips[i];
    const QColor c = stageColor(status, palette());
    chip->setText(stageGlyph(status) + QLatin1Char(' ') + stage);
    chip->setStyleSheet(QStringLiteral("QLabel { border: 1px solid %1; border-radius: 4px; padding: 2px 3px; color: %1; %2 }")
                            .arg(c.name(), status == QLatin1String("running") ? QStringLiteral("font-weight: bold;") : QString()));
    chip->setToolTip(reason.isEmpty() ? stage + QStringLiteral(": ") + status : stage + QStringLiteral(": ") + status + QStringLiteral(" — ") + reason);
}

QString AssistantDock::stageStatus(const QString& stage) const
{
    const int i = stageNames().indexOf(stage);
    return i < 0 ? QString() : m_stageStatus[i];
}

QFrame* AssistantDock::addBubble(const QString& title, const QString& text, const QString& role)
{
    auto* frame = new QFrame(m_conversation);
    frame->setObjectName(QStringLiteral("bubble_") + role);
    frame->setFrameShape(QFrame::StyledPanel);
    QColor bg = palette().color(QPalette::Base);
    if (role == QLatin1String("you"))
        bg = palette().color(QPalette::AlternateBase);
    else if (role == QLatin1String("model"))
        bg = blend(palette().color(QPalette::Base), palette().color(QPalette::Highlight), 0.14);
    frame->setStyleSheet(QStringLiteral("QFrame#%1 { background: %2; border-radius: 5px; }").arg(frame->objectName(), bg.name()));
    auto* v = new QVBoxLayout(frame);
    v->setContentsMargins(8, 5, 8, 6);
    v->setSpacing(3);
    auto* head = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), frame);
    v->addWidget(head);
    if (!text.isEmpty()) {
        auto* body = new QLabel(text, frame);
        body->setTextFormat(Qt::PlainText);
        body->setWordWrap(true);
        body->setTextInteractionFlags(Qt::TextSelectableByMouse);
        v->addWidget(body);
    }
    m_conversationLayout->insertWidget(m_conversationLayout->count() - 1, frame);
    scrollConversationToEnd();
    return frame;
}

void AssistantDock::scrollConversationToEnd()
{
    QTimer::singleShot(0, this, [this] {
        m_conversationScroll->verticalScrollBar()->setValue(m_conversationScroll->verticalScrollBar()->maximum());
    });
}

void AssistantDock::addNote(const QString& text)
{
    auto* label = new QLabel(text, m_conversation);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QPalette p = label->palette();
    p.setColor(QPalette::WindowText, palette().color(QPalette::Disabled, QPalette::WindowText));
    label->setPalette(p);
    label->setContentsMargins(4, 0, 4, 0);
    m_conversationLayout->insertWidget(m_conversationLayout->count() - 1, label);
    scrollConversationToEnd();
}

void AssistantDock::appendModelText(const QString& delta)
{
    m_pendingText += delta;
    if (!m_textTimer->isActive())
        m_textTimer->start();
}

QString AssistantDock::modelText() const { return m_streamText + m_pendingText; }

void AssistantDock::flushText()
{
    if (m_pendingText.isEmpty())
        return;
    m_streamText += m_pendingText;
    QScrollBar* bar = m_stream->verticalScrollBar();
    const bool atEnd = bar->value() >= bar->maximum() - 4;
    QTextCursor c(m_stream->document());
    c.movePosition(QTextCursor::End);
    c.insertText(m_pendingText);
    m_pendingText.clear();
    if (atEnd)
        bar->setValue(bar->maximum());
}

void AssistantDock::askQuestions(const QStringList& questions)
{
    QFrame* frame = addBubble(tr("The model asks"), {}, QStringLiteral("model"));
    auto* v = qobject_cast<QVBoxLayout*>(frame->layout());
    m_answerBoxes.clear();
    for (const QString& q : questions) {
        auto* label = new QLabel(q, frame);
        label->setWordWrap(true);
        label->setTextFormat(Qt::PlainText);
        v->addWidget(label);
        auto* box = new QPlainTextEdit(frame);
        box->setObjectName(QStringLiteral("answer%1").arg(m_answerBoxes.size()));
        box->setTabChangesFocus(true);
        box->setPlaceholderText(tr("your answer (empty: the model chooses)"));
        box->setMaximumHeight(fontMetrics().lineSpacing() * 3 + 12);
        v->addWidget(box);
        m_answerBoxes << box;
    }
    auto* buttons = new QHBoxLayout;
    m_sendAnswers = new QPushButton(tr("Send answers"), frame);
    m_sendAnswers->setObjectName(QStringLiteral("sendAnswers"));
    m_chooseForMe = new QPushButton(tr("Let the model choose"), frame);
    buttons->addStretch(1);
    buttons->addWidget(m_chooseForMe);
    buttons->addWidget(m_sendAnswers);
    v->addLayout(buttons);
    auto finish = [this](bool send) {
        QStringList answers;
        QString shown;
        if (send)
            for (QPlainTextEdit* box : m_answerBoxes) {
                answers << box->toPlainText().trimmed();
                shown += (shown.isEmpty() ? QString() : QStringLiteral("\n")) + (answers.last().isEmpty() ? tr("(no answer)") : answers.last());
            }
        for (QPlainTextEdit* box : m_answerBoxes)
            box->setReadOnly(true);
        m_sendAnswers->hide();
        m_chooseForMe->hide();
        m_answerBoxes.clear();
        m_sendAnswers = m_chooseForMe = nullptr;
        addBubble(tr("You"), send ? shown : tr("Choose yourself and list your assumptions."), QStringLiteral("you"));
        emit answersGiven(answers);
    };
    connect(m_sendAnswers, &QPushButton::clicked, this, [finish] { finish(true); });
    connect(m_chooseForMe, &QPushButton::clicked, this, [finish] { finish(false); });
    if (!m_answerBoxes.isEmpty())
        m_answerBoxes.first()->setFocus();
}

void AssistantDock::showProposal(const QString& taskJson, const QStringList& assumptions)
{
    QFrame* frame = addBubble(tr("The model proposes this task"), {}, QStringLiteral("model"));
    auto* v = qobject_cast<QVBoxLayout*>(frame->layout());
    auto* json = monoBox(frame, true);
    json->setObjectName(QStringLiteral("proposalJson"));
    json->setPlainText(taskJson);
    json->setLineWrapMode(QPlainTextEdit::NoWrap);
    json->setMinimumHeight(fontMetrics().lineSpacing() * 10);
    v->addWidget(json);
    if (!assumptions.isEmpty()) {
        QString text = tr("Assumptions:");
        for (const QString& a : assumptions)
            text += QStringLiteral("\n• ") + a;
        auto* label = new QLabel(text, frame);
        label->setWordWrap(true);
        label->setTextFormat(Qt::PlainText);
        v->addWidget(label);
    }
    auto* note = new QLabel(tr("Accepting freezes this spec: every kernel is checked against it."), frame);
    note->setWordWrap(true);
    v->addWidget(note);
    auto* buttons = new QHBoxLayout;
    m_reject = new QPushButton(tr("Reject"), frame);
    m_reject->setObjectName(QStringLiteral("rejectProposal"));
    m_accept = new QPushButton(tr("Accept"), frame);
    m_accept->setObjectName(QStringLiteral("acceptProposal"));
    buttons->addStretch(1);
    buttons->addWidget(m_reject);
    buttons->addWidget(m_accept);
    v->addLayout(buttons);
    auto decide = [this](bool accepted) {
        m_accept->hide();
        m_reject->hide();
        m_accept = m_reject = nullptr;
        addBubble(tr("You"), accepted ? tr("Accepted the task.") : tr("Rejected the task."), QStringLiteral("you"));
        emit proposalDecided(accepted);
    };
    connect(m_accept, &QPushButton::clicked, this, [decide] { decide(true); });
    connect(m_reject, &QPushButton::clicked, this, [decide] { decide(false); });
}

void AssistantDock::closePending(const QString& why)
{
    if (!m_sendAnswers && !m_accept)
        return;
    for (QPlainTextEdit* box : m_answerBoxes)
        box->setReadOnly(true);
    for (QPushButton* b : {m_sendAnswers, m_chooseForMe, m_accept, m_reject})
        if (b)
            b->hide();
    m_answerBoxes.clear();
    m_sendAnswers = m_chooseForMe = m_accept = m_reject = nullptr;
    addNote(why);
}

void AssistantDock::setCandidate(const QString& name, const QString& path, const QString& result, double speedup)
{
    QTreeWidgetItem* item = nullptr;
    for (int i = 0; i < m_candidates->topLevelItemCount(); ++i)
        if (m_candidates->topLevelItem(i)->text(0) == name)
            item = m_candidates->topLevelItem(i);
    if (!item)
        item = new QTreeWidgetItem(m_candidates);
    item->setText(0, name);
    item->setData(0, Qt::UserRole, path);
    item->setToolTip(0, path);
    item->setText(1, speedup > 0 ? QStringLiteral("%1×").arg(speedup, 0, 'f', 2) : QString());
    item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    item->setText(2, result);
    item->setToolTip(2, result);
    m_candidates->scrollToItem(item);
}

int AssistantDock::candidateCount() const { return m_candidates->topLevelItemCount(); }

void AssistantDock::setTotals(qint64 tokensIn, qint64 tokensOut, double usd)
{
    m_totals->setText(tr("Tokens: %L1 in · %L2 out · $%3").arg(tokensIn).arg(tokensOut).arg(usd, 0, 'f', usd < 1 ? 4 : 2));
}

void AssistantDock::setOutcome(const QString& sentence, bool good)
{
    m_outcome->setText(sentence);
    m_outcome->setVisible(!sentence.isEmpty());
    QPalette p = m_outcome->palette();
    p.setColor(QPalette::WindowText, good ? stageColor(QStringLiteral("done"), palette()) : palette().color(QPalette::WindowText));
    m_outcome->setPalette(p);
}

QString AssistantDock::outcome() const { return m_outcome->text(); }

} // namespace kf::ui
