#include "widgets/inspect/TensorViewport.h"

#include <QSizeF>

#include <algorithm>

namespace kf::ui {

TensorViewport::TensorViewport(QObject* parent) : QObject(parent) {}

void TensorViewport::setZoomStep(int step)
{
    step = std::clamp(step, kMinStep, kMaxStep);
    if (step == m_step)
        return;
    m_step = step;
    emit viewChanged();
}

QPointF TensorViewport::clamped(QPointF centre) const
{
    // Keep at least part of the slice in view: never pan into empty space for good.
    return {std::clamp(centre.x(), 0.0, static_cast<double>(m_slice.cols())),
            std::clamp(centre.y(), 0.0, static_cast<double>(m_slice.rows()))};
}

void TensorViewport::setCentre(QPointF centre)
{
    centre = clamped(centre);
    if (centre == m_centre)
        return;
    m_centre = centre;
    emit viewChanged();
}

void TensorViewport::zoomAt(int steps, QPointF offsetPx)
{
    const int step = std::clamp(m_step + steps, kMinStep, kMaxStep);
    if (step == m_step)
        return;
    const QPointF anchor = m_centre + offsetPx / scale();
    m_step = step;
    m_centre = clamped(anchor - offsetPx / scale());
    emit viewChanged();
}

void TensorViewport::panBy(QPointF deltaPx)
{
    setCentre(m_centre - deltaPx / scale());
}

void TensorViewport::fit(QSizeF pane)
{
    const double rows = static_cast<double>(std::max<std::int64_t>(m_slice.rows(), 1));
    const double cols = static_cast<double>(std::max<std::int64_t>(m_slice.cols(), 1));
    const double s = std::min(pane.width() / cols, pane.height() / rows);
    const int step = s > 0 ? static_cast<int>(std::floor(2.0 * std::log2(s))) : 0;
    m_step = std::clamp(step, kMinStep, kMaxStep);
    m_centre = QPointF(cols / 2.0, rows / 2.0);
    emit viewChanged();
}

void TensorViewport::centreOn(std::int64_t row, std::int64_t col, double minScale)
{
    if (scale() < minScale)
        m_step = std::clamp(static_cast<int>(std::ceil(2.0 * std::log2(minScale))), kMinStep, kMaxStep);
    m_centre = clamped(QPointF(static_cast<double>(col) + 0.5, static_cast<double>(row) + 0.5));
    emit viewChanged();
}

void TensorViewport::setHover(std::int64_t row, std::int64_t col)
{
    if (row < 0 || col < 0)
        row = col = -1;
    if (row == m_hoverRow && col == m_hoverCol)
        return;
    m_hoverRow = row;
    m_hoverCol = col;
    emit hoverChanged();
}

void TensorViewport::setFocus(std::int64_t flat)
{
    if (flat == m_focus)
        return;
    m_focus = flat;
    emit focusChanged();
}

void TensorViewport::setSlice(const SliceSpec& slice)
{
    if (slice == m_slice)
        return;
    const bool sameGrid = slice.rows() == m_slice.rows() && slice.cols() == m_slice.cols();
    if (slice.extents != m_slice.extents)
        m_focus = -1;
    m_slice = slice;
    if (!sameGrid)
        clearHover();
    emit sliceChanged();
}

void TensorViewport::setMode(DiffMode mode)
{
    if (mode == m_mode)
        return;
    m_mode = mode;
    emit modeChanged();
}

} // namespace kf::ui
