#include "widgets/profile/PercentBar.h"

#include "widgets/profile/ProfileFormat.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kf::ui {

PercentBar::PercentBar(QWidget* parent)
    : QWidget(parent)
    , m_color(palette().color(QPalette::Highlight))
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setFocusPolicy(Qt::NoFocus);
    setValue(std::nullopt);
}

void PercentBar::setValue(std::optional<double> pct, const QString& whyAbsent)
{
    m_value = pct && std::isfinite(*pct) ? pct : std::nullopt;
    setToolTip(m_value ? QString() : whyAbsent);
    setAccessibleDescription(m_value ? text() : whyAbsent);
    update();
}

void PercentBar::setColor(const QColor& color)
{
    m_color = color;
    update();
}

QString PercentBar::text() const
{
    return percentText(m_value);
}

QSize PercentBar::sizeHint() const
{
    return {160, fontMetrics().height() + 6};
}

QSize PercentBar::minimumSizeHint() const
{
    return {fontMetrics().horizontalAdvance(QStringLiteral("100.0 %")) + 12, fontMetrics().height() + 6};
}

void PercentBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QPalette& pal = palette();
    const QRect track = rect().adjusted(0, 1, -1, -2);
    p.setPen(pal.color(QPalette::Mid));
    p.setBrush(pal.color(QPalette::Base));
    p.drawRect(track);

    const QRect inner = track.adjusted(1, 1, 0, 0);
    const double fraction = m_value ? std::clamp(*m_value, 0.0, 100.0) / 100.0 : 0.0;
    const QRect filled(inner.topLeft(), QSize(static_cast<int>(std::lround(inner.width() * fraction)), inner.height()));
    p.fillRect(filled, m_color);

    // Inside the fill in a colour that reads on it when it fits there, else after the fill.
    const QString label = text();
    const int textWidth = fontMetrics().horizontalAdvance(label) + 12;
    if (filled.width() >= textWidth) {
        // Perceived brightness (Rec. 601 luma), not HSL lightness: a mid teal needs black text.
        const double luma = 0.299 * m_color.red() + 0.587 * m_color.green() + 0.114 * m_color.blue();
        p.setPen(luma < 140 ? QColor(Qt::white) : QColor(Qt::black));
        p.drawText(filled.adjusted(6, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
    } else {
        p.setPen(m_value ? pal.color(QPalette::Text) : pal.color(QPalette::PlaceholderText));
        p.drawText(inner.adjusted(filled.width() + 6, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
    }
}

} // namespace kf::ui
