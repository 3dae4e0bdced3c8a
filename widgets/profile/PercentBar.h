#pragma once
// A horizontal bar for a percentage of a peak (occupancy, throughput), with its value written on
// it. Unlike QProgressBar it looks the same in every style, draws an absent value as "—" rather
// than 0 %, and takes the colour of the series it belongs to (candidate or baseline).

#include <QColor>
#include <QString>
#include <QWidget>

#include <optional>

namespace kf::ui {

/// Read-only; not focusable (the details table holds the same numbers for the keyboard). The
/// accessible description carries the value. GUI thread only.
class PercentBar : public QWidget {
    Q_OBJECT
public:
    explicit PercentBar(QWidget* parent = nullptr);

    /// `pct` 0..100 (clamped when drawn, written as is); nullopt shows "—" with `whyAbsent` as tooltip.
    void setValue(std::optional<double> pct, const QString& whyAbsent = {});
    void setColor(const QColor& color);

    std::optional<double> value() const { return m_value; }
    /// What the bar writes: "61.8 %" or "—".
    QString text() const;
    QColor color() const { return m_color; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::optional<double> m_value;
    QColor m_color;
};

} // namespace kf::ui
