#pragma once
// The one view state the three panes share: zoom, centre, hovered element, displayed slice and
// difference mode. A pane changes it (wheel, drag, hover) and every pane redraws from it, so
// they cannot drift apart.

#include "widgets/inspect/SliceSpec.h"
#include "widgets/inspect/TileSource.h"

#include <QObject>
#include <QPointF>

#include <cmath>

namespace kf::ui {

/// GUI thread only. Coordinates: an element (row r, column c) covers [c, c+1) × [r, r+1) in
/// element space; centre() is the element-space point at the middle of every pane.
class TensorViewport : public QObject {
    Q_OBJECT

public:
    /// Zoom steps are powers of √2: scale = 2^(step/2) pixels per element.
    static constexpr int kMinStep = -40;  ///< 2^-20: a billion-element row still fits
    static constexpr int kMaxStep = 14;   ///< 128 px per element

    explicit TensorViewport(QObject* parent = nullptr);

    int zoomStep() const { return m_step; }
    double scale() const { return std::exp2(m_step / 2.0); }
    QPointF centre() const { return m_centre; }
    void setZoomStep(int step);
    void setCentre(QPointF centre);
    /// Zooms by `steps` keeping the point `offsetPx` away from a pane's middle where it is.
    void zoomAt(int steps, QPointF offsetPx);
    /// Moves the picture by `deltaPx` (a drag of the mouse).
    void panBy(QPointF deltaPx);
    /// The largest zoom at which the whole slice fits `pane`, centred.
    void fit(QSizeF pane);
    /// Centres on a cell, zooming in to at least `minScale` px per element.
    void centreOn(std::int64_t row, std::int64_t col, double minScale);

    bool hasHover() const { return m_hoverRow >= 0; }
    std::int64_t hoverRow() const { return m_hoverRow; }
    std::int64_t hoverCol() const { return m_hoverCol; }
    void setHover(std::int64_t row, std::int64_t col);
    void clearHover() { setHover(-1, -1); }

    /// The element next()/previous() or the mismatch list went to (a flat index, -1 for none):
    /// every pane rings it while it is on the displayed slice.
    std::int64_t focus() const { return m_focus; }
    void setFocus(std::int64_t flat);

    const SliceSpec& slice() const { return m_slice; }
    void setSlice(const SliceSpec& slice);
    DiffMode mode() const { return m_mode; }
    void setMode(DiffMode mode);

signals:
    void viewChanged();
    void hoverChanged();
    void focusChanged();
    void sliceChanged();
    void modeChanged();

private:
    QPointF clamped(QPointF centre) const;

    int m_step = 0;
    QPointF m_centre;
    std::int64_t m_hoverRow = -1, m_hoverCol = -1;
    std::int64_t m_focus = -1;
    SliceSpec m_slice;
    DiffMode m_mode = DiffMode::Ratio;
};

} // namespace kf::ui
