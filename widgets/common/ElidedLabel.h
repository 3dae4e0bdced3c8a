#pragma once
// A one-line label that elides on the right instead of widening its layout: the stage text of a
// run ("shape 2/3 tail (B=7 D=4099) trial 2/3 · launch 1 (softmax<256>) …") can be long, and a
// QLabel would push the Cancel button out of the window.

#include <QString>
#include <QWidget>

namespace kf::ui {

/// GUI thread only; owned by its Qt parent. The full text is the tooltip whenever it is elided.
class ElidedLabel : public QWidget {
    Q_OBJECT

public:
    explicit ElidedLabel(QWidget* parent = nullptr);

    void setText(const QString& text);
    QString text() const { return m_text; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateToolTip();

    QString m_text;
};

} // namespace kf::ui
