#include "widgets/common/PaletteChartView.h"

#include "widgets/common/StatusColors.h"

#include <QAbstractAxis>
#include <QChart>
#include <QEvent>

namespace kf::ui {

PaletteChartView::PaletteChartView(QWidget* parent)
    : QChartView(parent)
{
}

bool PaletteChartView::isDarkTheme() const
{
    return chart()->theme() == QChart::ChartThemeDark;
}

bool PaletteChartView::applyChartTheme(const QPalette& p)
{
    const bool dark = isDarkPalette(p);
    const QChart::ChartTheme theme = dark ? QChart::ChartThemeDark : QChart::ChartThemeLight;
    if (chart()->theme() != theme)
        chart()->setTheme(theme);
    chart()->setBackgroundBrush(p.color(QPalette::Base));
    return dark;
}

void PaletteChartView::colorAxis(QAbstractAxis* axis, const QColor& text, const QColor& grid)
{
    axis->setLabelsBrush(text);
    axis->setTitleBrush(text);
    axis->setGridLineColor(grid);
    axis->setLinePenColor(grid);
}

void PaletteChartView::changeEvent(QEvent* event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        applyPalette();
}

} // namespace kf::ui
