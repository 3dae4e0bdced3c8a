#pragma once
// The hints under the numbers: one card per kf::profile::Hint, severity first, each with the
// evidence it rests on and what to try.

#include "engine/profile/Hints.h"

#include <QString>
#include <QWidget>

#include <vector>

class QLabel;
class QVBoxLayout;

namespace kf::ui {

/// Read-only. Each card is a QFrame named "hint" with the property "hintId" and the labels
/// "hintTitle", "hintEvidence" and "hintSuggestion"; the evidence and suggestion are selectable
/// with mouse and keyboard (Tab reaches them). GUI thread only.
class HintList : public QWidget {
    Q_OBJECT
public:
    explicit HintList(QWidget* parent = nullptr);

    /// Replaces the cards; with no hints shows `emptyText` instead.
    void setHints(std::vector<kf::profile::Hint> hints, const QString& emptyText);
    const std::vector<kf::profile::Hint>& hints() const { return m_hints; }
    QString emptyText() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();

    std::vector<kf::profile::Hint> m_hints;
    QVBoxLayout* m_layout = nullptr;
    QLabel* m_empty = nullptr;
    std::vector<QWidget*> m_cards;
};

} // namespace kf::ui
