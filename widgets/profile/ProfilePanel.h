#pragma once
// The Profile panel: hardware counters of one profiled launch beside the static numbers.
// Achieved against theoretical occupancy with its limiter, SM/DRAM/memory throughput against
// peak (candidate and baseline side by side), a roofline, plain-language hints with their
// evidence, and every metric per kernel in a table. Without counters it says why and how to
// enable them, and still shows the static numbers.

#include "engine/protocol/ProfileReport.h"

#include <QString>
#include <QWidget>

#include <optional>

class QBoxLayout;
class QComboBox;
class QFrame;
class QGroupBox;
class QLabel;
class QProgressBar;
class QScrollArea;
class QStackedWidget;
class QTableView;
class QToolButton;

namespace kf::ui {

class HintList;
class MetricTableModel;
class OccupancySection;
class RooflineChart;
class ThroughputSection;

/// Read-only view of a kf::profile::ProfileReport; it never starts a profile. Made for a dock:
/// sections side by side when there is room, stacked when narrow, everything in a scroll area. The owner
/// calls setBusy while a profile runs, then setReport (or setError). GUI thread only.
class ProfilePanel : public QWidget {
    Q_OBJECT
public:
    explicit ProfilePanel(QWidget* parent = nullptr);
    ~ProfilePanel() override;

    /// Shows `report` (copied) and ends a busy state. A report whose verdict is "error" shows its
    /// header's error (what, why, hint) instead of numbers. The kernel selected before stays
    /// selected when the new report has a kernel of the same name at the same index.
    void setReport(const kf::profile::ProfileReport& report);
    /// Empties the panel and says `why` ("No profile yet" when empty).
    void clear(const QString& why = {});
    /// A profile is running: shows `message` with a busy indicator above the last numbers,
    /// which stay visible but greyed until setReport, setError or clear.
    void setBusy(const QString& message);
    /// The profile could not run: replaces the numbers with `message` (in the error colour).
    void setError(const QString& message);

    // Read-only views for the owner's status line and for tests.
    const std::optional<kf::profile::ProfileReport>& report() const { return m_report; }
    bool isBusy() const;
    /// What the panel says instead of numbers (clear, error, error report); empty when numbers show.
    QString messageText() const;
    /// The candidate kernel the sections show, or -1 for all of them.
    int selectedKernel() const;
    /// Shows kernel `index` of the candidate (-1: all); ignored when out of range.
    void selectKernel(int index);
    RooflineChart* rooflineChart() const { return m_roofline; }
    HintList* hintList() const { return m_hints; }
    MetricTableModel* metricModel() const { return m_metrics; }

signals:
    /// Another kernel is shown (-1: all kernels), picked by the user or through selectKernel;
    /// a new report does not emit it.
    void kernelSelected(int index);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void buildUi();
    void buildBusyRow();
    QGroupBox* buildRoofline(QWidget* content);
    QWidget* buildHeader();
    QWidget* buildDetails();
    void showMessage(const QString& text, bool isError);
    void showHeader(const kf::profile::ProfileReport& r);
    void showCounterStatus(const kf::profile::CounterStatus& c);
    void fillKernelCombo(int keepIndex);
    void showSelection();
    void updateRows();
    void copySelectedCells();
    void applyColors();

    std::optional<kf::profile::ProfileReport> m_report;
    QString m_message;
    bool m_messageIsError = false;

    QWidget* m_busyRow = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QLabel* m_busyLabel = nullptr;
    QStackedWidget* m_pages = nullptr;
    QLabel* m_messageLabel = nullptr;
    QScrollArea* m_scroll = nullptr;

    QLabel* m_header = nullptr;
    QFrame* m_banner = nullptr;
    QLabel* m_bannerTitle = nullptr;
    QLabel* m_problem = nullptr;
    QLabel* m_howTo = nullptr;
    QLabel* m_unsupported = nullptr;
    QLabel* m_summary = nullptr;
    QWidget* m_kernelRow = nullptr;
    QComboBox* m_kernelCombo = nullptr;
    QBoxLayout* m_numbersRow = nullptr;
    QBoxLayout* m_insightRow = nullptr;
    OccupancySection* m_occupancy = nullptr;
    ThroughputSection* m_throughput = nullptr;
    RooflineChart* m_roofline = nullptr;
    QLabel* m_rooflineNotes = nullptr;
    HintList* m_hints = nullptr;
    QToolButton* m_detailsToggle = nullptr;
    QTableView* m_table = nullptr;
    MetricTableModel* m_metrics = nullptr;
    bool m_updating = false;
};

} // namespace kf::ui
