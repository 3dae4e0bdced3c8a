#pragma once
// The bar above an editor whose file is not UTF-8: what was found (the engine's words,
// engine/compile/SourceEncoding.h), that the file is open read-only, and the one lossless way
// to edit it, as a button (Convert to UTF-8 for UTF-16/32, Open as Latin-1 for other bytes).
// Nothing is converted until the button is pressed; the owner does the conversion.

#include <QFrame>
#include <QString>

class QLabel;
class QPushButton;

namespace kf::ui {

/// GUI thread only; owned by its Qt parent. Hidden until showProblem().
class EncodingBanner : public QFrame {
    Q_OBJECT
public:
    explicit EncodingBanner(QWidget* parent = nullptr);

    /// Shows `sentence` and, when `action` is not empty, a button with that text.
    void showProblem(const QString& sentence, const QString& action);
    QString text() const;
    QPushButton* actionButton() const { return m_action; }

signals:
    void actionRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyColors();

    QLabel* m_text = nullptr;
    QPushButton* m_action = nullptr;
};

} // namespace kf::ui
