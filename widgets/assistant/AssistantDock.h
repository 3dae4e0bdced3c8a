#pragma once
// The Assistant panel (docs/workbench.md, "Assistant"): the view of a kernel synthesis run with a
// language model (engine/synth/Synthesis.h). A request box with a model picker and Start; the
// conversation (the model's questions with answer boxes, the proposed task with its assumptions
// and Accept / Reject); the five stages with their status; the model's streamed text; the
// candidates as they come; the cost so far; Cancel; the outcome. Pure view: it knows strings,
// never the engine's loop or the runner; app/gui/window/AssistantController drives it.

#include <QString>
#include <QStringList>
#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;
class QFrame;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QTimer;
class QTreeWidget;
class QTreeWidgetItem;
class QVBoxLayout;

namespace kf::ui {

class AssistantDock : public QWidget {
    Q_OBJECT
public:
    /// The stages in order, as the engine names them: interview, codegen, correctness,
    /// performance, polish.
    static const QStringList& stageNames();

    explicit AssistantDock(QWidget* parent = nullptr);

    /// The names in the model picker; `preselect` ("default") is chosen when listed. An empty
    /// list disables Start and says to configure a model in the settings.
    void setModels(const QStringList& names, const QString& preselect, const QString& problem = {});
    QString request() const;
    void setRequest(const QString& text);
    QString modelName() const;
    /// The run's limits as set in the panel: replies per stage, faster rounds, dollars (0: none).
    int maxAttempts() const;
    int perfRounds() const;
    double budgetUsd() const;

    /// Starts a new conversation: clears the previous run's view. `target` says what the run
    /// works on ("the task softmax_fp32", "a new task in /x/y").
    void beginRun(const QString& target);
    /// Start disabled and Cancel enabled while a run is in flight.
    void setRunning(bool running);
    bool isRunning() const { return m_running; }

    /// A stage's status: pending, running, done, failed, skipped, cancelled or stopped.
    void setStageStatus(const QString& stage, const QString& status, const QString& reason = {});
    QString stageStatus(const QString& stage) const;

    /// A line in the conversation from the engine (a note, "asking model-x").
    void addNote(const QString& text);
    /// Appends a delta of the model's streamed text; repaints at most 20 times a second.
    void appendModelText(const QString& delta);
    /// The whole streamed text so far (pending deltas included).
    QString modelText() const;

    /// Shows the model's questions with one answer box each; answersGiven() follows a click on
    /// Send (the boxes' texts) or on "Let the model choose" (an empty list).
    void askQuestions(const QStringList& questions);
    /// Shows the proposed task (pretty JSON) and the model's assumptions with Accept / Reject;
    /// proposalDecided() follows the click.
    void showProposal(const QString& taskJson, const QStringList& assumptions);
    /// Disables the open question or proposal (the run was cancelled while it waited).
    void closePending(const QString& why);

    /// A kernel the model sent: `name` as in the run folder, `path` opened on double-click,
    /// `result` one sentence, `speedup` <= 0 when not benchmarked. Same name: the row updates.
    void setCandidate(const QString& name, const QString& path, const QString& result, double speedup);
    int candidateCount() const;
    /// Tokens in and out, and US dollars (models without prices count as free).
    void setTotals(qint64 tokensIn, qint64 tokensOut, double usd);
    /// The run's last sentence; `good` colours it as a success.
    void setOutcome(const QString& sentence, bool good);
    QString outcome() const;

    // Parts, for tests and screenshots.
    QPushButton* startButton() const { return m_start; }
    QPushButton* cancelButton() const { return m_cancel; }
    QPushButton* acceptButton() const { return m_accept; }
    QPushButton* rejectButton() const { return m_reject; }
    QPushButton* sendAnswersButton() const { return m_sendAnswers; }
    /// The answer boxes of the open question (empty when none is open).
    QList<QPlainTextEdit*> answerBoxes() const { return m_answerBoxes; }
    QTreeWidget* candidateList() const { return m_candidates; }
    QComboBox* modelPicker() const { return m_model; }
    QPlainTextEdit* requestBox() const { return m_request; }

signals:
    void startRequested(const QString& request, const QString& model);
    void cancelRequested();
    /// One answer per question; empty: the model chooses and lists its assumptions.
    void answersGiven(const QStringList& answers);
    void proposalDecided(bool accepted);
    /// A candidate row was double-clicked: its file in the run folder.
    void candidateActivated(const QString& path);

private:
    // The constructor's parts, top to bottom, then the connections.
    void buildRequest(QVBoxLayout* layout);
    void buildLimits(QVBoxLayout* layout);
    void buildStages(QVBoxLayout* layout);
    QWidget* buildProgress();
    void wireSignals();
    QFrame* addBubble(const QString& title, const QString& text, const QString& role);
    void flushText();
    void scrollConversationToEnd();
    void updateStartEnabled();

    QPlainTextEdit* m_request = nullptr;
    QComboBox* m_model = nullptr;
    QSpinBox* m_attempts = nullptr;
    QSpinBox* m_perfRounds = nullptr;
    QDoubleSpinBox* m_budget = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_target = nullptr;
    QList<QLabel*> m_stageChips;
    QStringList m_stageStatus;
    QWidget* m_conversation = nullptr;
    QVBoxLayout* m_conversationLayout = nullptr;
    QScrollArea* m_conversationScroll = nullptr;
    QPlainTextEdit* m_stream = nullptr;
    QString m_pendingText;
    QString m_streamText;
    QTimer* m_textTimer = nullptr;
    QTreeWidget* m_candidates = nullptr;
    QLabel* m_totals = nullptr;
    QLabel* m_outcome = nullptr;
    QList<QPlainTextEdit*> m_answerBoxes;
    QPushButton* m_sendAnswers = nullptr;
    QPushButton* m_chooseForMe = nullptr;
    QPushButton* m_accept = nullptr;
    QPushButton* m_reject = nullptr;
    bool m_running = false;
    bool m_haveModels = false;
};

} // namespace kf::ui
