#pragma once
// The chart of a tune search: every timed point's geomean time (x: the point's number, the
// table's order; y: ms), the roofline floor (bytes ÷ peak bandwidth) and eager and torch.compile
// as horizontal lines, the points that failed in red along the top with their reason on hover,
// the finalists ringed and the winner starred. Drawn like RooflineChart (widgets/profile): Qt
// Charts series, colours from the widget palette; the legend names each line with its figure and
// the winner with its point, so no label covers a mark.

#include "engine/tune/Tuner.h"
#include "widgets/common/PaletteChartView.h"

#include <QHash>

#include <map>
#include <optional>
#include <vector>

class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace kf::ui {

class TuneChart : public PaletteChartView {
    Q_OBJECT
public:
    enum class Marks { Timed, Finalists, Winner, Failed };
    enum class Line { Floor, Eager, Compile };

    struct Data {
        std::vector<kf::tune::PointResult> points;   ///< the table's order: x is the index + 1
        std::optional<double> floorMs, eagerMs, compileMs;
    };

    explicit TuneChart(QWidget* parent = nullptr);

    void setData(Data data);
    const Data& data() const { return m_data; }

    // What is drawn, for tests (x: point number, y: ms).
    QScatterSeries* marks(Marks m) const;
    /// The line, or nullptr when its figure is not known.
    QLineSeries* line(Line l) const;
    /// The legend's text of a line ("eager (LibTorch) 0.6 ms") or the winner; empty when none is drawn.
    QString labelText(Line l) const;
    QString winnerLabel() const;
    /// The hover text of point `number` (1-based, the table's #).
    QString tipOf(int number) const;
    QValueAxis* axisY() const { return m_y; }

private:
    struct DrawnLine {
        Line kind;
        QLineSeries* series = nullptr;
        double ms = 0;
    };
    void rebuild();
    void addMarks(double failedY);
    void addLine(Line kind, const QString& name, double ms, double xMax);
    void applyPalette() override;
    QScatterSeries* scatter(const QString& name);

    Data m_data;
    QValueAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    std::map<Marks, QScatterSeries*> m_marks;
    std::vector<DrawnLine> m_lines;
    QString m_winnerName;
    QHash<int, QString> m_tips;   ///< point number -> hover text
};

} // namespace kf::ui
