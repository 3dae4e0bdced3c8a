#include "widgets/editor/EncodingBanner.h"

#include "widgets/common/StatusColors.h"

#include <QEvent>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace kf::ui {

EncodingBanner::EncodingBanner(QWidget* parent)
    : QFrame(parent)
    , m_text(new QLabel(this))
    , m_action(new QPushButton(this))
{
    setObjectName(QStringLiteral("encodingBanner"));
    m_text->setObjectName(QStringLiteral("encodingBannerText"));
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::PlainText);   // a file name is not markup
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_action->setObjectName(QStringLiteral("encodingAction"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 4);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_action);
    connect(m_action, &QPushButton::clicked, this, &EncodingBanner::actionRequested);
    hide();
}

void EncodingBanner::showProblem(const QString& sentence, const QString& action)
{
    m_text->setText(sentence);
    m_action->setText(action);
    m_action->setVisible(!action.isEmpty());
    applyColors();
    show();
}

QString EncodingBanner::text() const
{
    return m_text->text();
}

void EncodingBanner::changeEvent(QEvent* event)
{
    QFrame::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        applyColors();
}

void EncodingBanner::applyColors()
{
    // The warning amber of the application's theme (never this widget's palette, which the style
    // sheet changes), as a tint behind the text and a line under it.
    const QPalette app = QGuiApplication::palette();
    const QColor amber = warningColor(app);
    QColor tint = amber;
    tint.setAlpha(isDarkPalette(app) ? 70 : 45);
    const QString css = QStringLiteral("#encodingBanner { background: %1; border-bottom: 1px solid %2; }")
                            .arg(tint.name(QColor::HexArgb), amber.name());
    if (styleSheet() != css)
        setStyleSheet(css);
}

} // namespace kf::ui
