#pragma once
// One pane of the inspector: a tensor slice drawn from cached tiles (paintEvent only blits),
// with the shared crosshair, and for the difference pane the row and column maxima strips along
// its right and bottom edges. Wheel zooms around the cursor, dragging pans, hovering moves the
// crosshair: all through the shared TensorViewport, so the three panes move together.

#include "widgets/inspect/OutputAnalysis.h"
#include "widgets/inspect/TileSource.h"

#include <QPointer>
#include <QWidget>

#include <memory>

namespace kf::ui {

class TensorViewport;
class TileRenderer;

/// GUI thread only; owned by its Qt parent. The viewport and renderer must outlive it.
class TensorCanvas : public QWidget {
    Q_OBJECT

public:
    static constexpr int kStripWidth = 10;
    static constexpr int kStripGap = 4;

    TensorCanvas(TensorViewport* view, TileRenderer* renderer, int owner, QWidget* parent = nullptr);

    /// What to draw; null shows the placeholder text instead.
    void setSource(std::shared_ptr<const TileSource> source);
    const TileSource* source() const { return m_source.get(); }
    void setPlaceholder(const QString& text);
    /// Shows the row and column strips (difference pane) from `summary` (may be null for now).
    void setStripsEnabled(bool on);
    void setSummary(std::shared_ptr<const SliceSummary> summary);
    const SliceSummary* summary() const { return m_summary.get(); }

    /// The area the slice is drawn in (the widget minus the strips).
    QRect imageRect() const;
    QRect rowStripRect() const;     ///< right edge: one mark per row
    QRect columnStripRect() const;  ///< bottom edge: one mark per column
    /// Widget position of a cell's middle, and the cell under a widget position.
    QPoint cellCentre(std::int64_t row, std::int64_t col) const;
    QRectF cellRect(std::int64_t row, std::int64_t col) const;
    bool cellAt(QPointF pos, std::int64_t* row, std::int64_t* col) const;
    /// The tooltip a strip shows at `pos` (empty outside the strips).
    QString stripToolTip(QPoint pos) const;
    /// True when the last paint found every visible tile at its exact level.
    bool isComplete() const { return m_complete; }

signals:
    void resized();

protected:
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    QPointF origin() const;  ///< widget position of element (0, 0)'s corner
    void paintTiles(QPainter& p);
    void paintCrosshair(QPainter& p);
    void paintStrips(QPainter& p);
    QString stripText(bool rows, std::int64_t first, std::int64_t last) const;

    TensorViewport* m_view;
    TileRenderer* m_renderer;
    int m_owner;
    std::shared_ptr<const TileSource> m_source;
    std::shared_ptr<const SliceSummary> m_summary;
    QString m_placeholder;
    bool m_strips = false;
    bool m_complete = false;
    bool m_dragging = false;
    QPointF m_lastDrag;
    int m_wheelAccum = 0;
};

} // namespace kf::ui
