#include "widgets/common/VerdictStyle.h"

#include "widgets/common/StatusColors.h"

#include <QPainter>
#include <QPixmap>

namespace kf::ui::verdictstyle {

QColor color(Tone tone, const QPalette& palette)
{
    const bool dark = isDarkPalette(palette);
    switch (tone) {
    case Tone::Good:
        return dark ? QColor(0x6c, 0xcf, 0x7f) : QColor(0x1b, 0x7f, 0x37);
    case Tone::Warning:
        return dark ? QColor(0xf0, 0xb4, 0x4c) : QColor(0x9a, 0x60, 0x00);
    case Tone::Bad:
        return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xc6, 0x28, 0x28);
    case Tone::Neutral:
        break;
    }
    return palette.color(QPalette::Text);
}

QIcon icon(Tone tone, const QPalette& palette)
{
    if (tone == Tone::Neutral)
        return {};
    QPixmap pixmap(12, 12);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(color(tone, palette));
    p.drawEllipse(QRectF(1.5, 1.5, 9, 9));
    p.end();
    return QIcon(pixmap);
}

} // namespace kf::ui::verdictstyle
