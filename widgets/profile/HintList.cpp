#include "widgets/profile/HintList.h"

#include "widgets/profile/ProfileColors.h"

#include <QEvent>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QVBoxLayout>

namespace kf::ui {
namespace {

using Severity = kf::profile::Hint::Severity;

QString severityWord(Severity s)
{
    switch (s) {
    case Severity::Warning: return HintList::tr("warning");
    case Severity::Advice: return HintList::tr("advice");
    case Severity::Info: break;
    }
    return HintList::tr("note");
}

QLabel* textLabel(const QString& name, const QString& text, QWidget* parent)
{
    auto* l = new QLabel(text, parent);
    l->setObjectName(name);
    l->setWordWrap(true);
    l->setTextFormat(Qt::PlainText);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    return l;
}

} // namespace

HintList::HintList(QWidget* parent)
    : QWidget(parent)
{
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setSpacing(6);
    m_empty = new QLabel(this);
    m_empty->setObjectName(QStringLiteral("hintsEmpty"));
    m_empty->setWordWrap(true);
    m_layout->addWidget(m_empty);
    m_layout->addStretch(1);
}

void HintList::setHints(std::vector<kf::profile::Hint> hints, const QString& emptyText)
{
    m_hints = std::move(hints);
    m_empty->setText(emptyText);
    rebuild();
}

QString HintList::emptyText() const
{
    return m_empty->isVisibleTo(this) ? m_empty->text() : QString();
}

void HintList::rebuild()
{
    for (QWidget* card : m_cards)
        delete card;
    m_cards.clear();
    m_empty->setVisible(m_hints.empty());

    const QPalette& pal = palette();
    int row = 0;
    for (const kf::profile::Hint& h : m_hints) {
        auto* card = new QFrame(this);
        card->setObjectName(QStringLiteral("hint"));
        card->setProperty("hintId", QString::fromStdString(h.id));
        card->setAccessibleName(severityWord(h.severity) + QStringLiteral(": ") + QString::fromStdString(h.title));
        // The stripe carries the severity; the icon repeats it for those who do not see colour.
        const QColor stripe = profilecolors::severity(h.severity, pal);
        card->setStyleSheet(QStringLiteral("QFrame#hint { border-left: 3px solid %1; }").arg(stripe.name()));

        auto* icon = new QLabel(card);
        icon->setObjectName(QStringLiteral("hintIcon"));
        const QStyle::StandardPixmap sp = h.severity == Severity::Warning ? QStyle::SP_MessageBoxWarning
                                                                          : QStyle::SP_MessageBoxInformation;
        const int size = style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, this);
        icon->setPixmap(style()->standardIcon(sp, nullptr, this).pixmap(size, size));
        icon->setToolTip(severityWord(h.severity));
        icon->setAlignment(Qt::AlignTop);

        auto* title = textLabel(QStringLiteral("hintTitle"), QString::fromStdString(h.title), card);
        QFont bold = title->font();
        bold.setBold(true);
        title->setFont(bold);
        title->setTextInteractionFlags(Qt::TextSelectableByMouse);
        auto* text = new QVBoxLayout;
        text->setSpacing(2);
        text->addWidget(title);
        if (!h.evidence.empty())
            text->addWidget(textLabel(QStringLiteral("hintEvidence"), QString::fromStdString(h.evidence), card));
        if (!h.suggestion.empty())
            text->addWidget(textLabel(QStringLiteral("hintSuggestion"),
                                      tr("Try: %1").arg(QString::fromStdString(h.suggestion)), card));

        auto* layout = new QHBoxLayout(card);
        layout->setContentsMargins(8, 2, 2, 2);
        layout->addWidget(icon, 0, Qt::AlignTop);
        layout->addLayout(text, 1);
        m_layout->insertWidget(1 + row++, card);
        m_cards.push_back(card);
    }
}

void HintList::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        rebuild(); // the stripes' colours depend on the palette
}

} // namespace kf::ui
