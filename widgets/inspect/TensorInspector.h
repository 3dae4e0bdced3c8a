#pragma once
// The failing-input inspector: reference | candidate | difference for one output of a saved
// failing case (or one pane for an input), zoomed and panned together, with the mismatch list,
// the error histogram and the case's tensors below. It only reads files; Export, Shrink and
// Re-run are signals for the caller. Errors in the case show in the widget, never crash it.

#include "widgets/inspect/OutputAnalysis.h"
#include "widgets/inspect/TileSource.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTableView;
class QThreadPool;
class QVBoxLayout;

namespace kf::ui {

class AnalysisPass;
class CaseData;
class CaseTensorsModel;
class ColorLegend;
class ErrorHistogramView;
class MismatchListModel;
class SliceControls;
class TensorCanvas;
class TensorViewport;
class TileRenderer;

/// GUI thread only; owned by its Qt parent. Owns its worker pools and waits for them on
/// destruction.
class TensorInspector : public QWidget {
    Q_OBJECT

public:
    enum class Pane { Reference, Candidate, Difference };

    explicit TensorInspector(QWidget* parent = nullptr);
    ~TensorInspector() override;

    /// Opens the case folder `caseDir` on `output` (the first output when empty). False with
    /// errorString() set (and shown in the widget) when the case cannot be read.
    bool openCase(const QString& caseDir, const QString& output = {});
    QString errorString() const { return m_error; }
    QString caseDir() const;

    /// Shows a tensor of the case by name: an output (three panes) or an input (one pane).
    bool showTensor(const QString& name);
    void setDiffMode(DiffMode mode);
    /// Moves to the next (previous) mismatch in C order over the whole tensor, wrapping.
    void next();
    void previous();
    /// Centres on element `flat` of the shown tensor, stepping the fixed axes to its slice.
    void goTo(std::int64_t flat);
    void fitView();

    /// For tests and the status bar.
    bool isAnalysed() const { return m_analysis != nullptr; }
    const TensorAnalysis* analysis() const { return m_analysis.get(); }
    std::int64_t currentFlat() const { return m_cursor; }
    QString hoverText() const;
    QString statusText() const;
    QString warningText() const;
    TensorCanvas* pane(Pane p) const;
    TensorViewport* viewport() const { return m_view; }
    SliceControls* sliceControls() const { return m_slice; }
    ColorLegend* valueLegend() const { return m_valueLegend; }
    ColorLegend* differenceLegend() const { return m_diffLegend; }
    ErrorHistogramView* histogram() const { return m_histogram; }
    MismatchListModel* mismatchModel() const { return m_mismatches; }
    QTableView* mismatchView() const { return m_mismatchView; }
    CaseTensorsModel* tensorsModel() const { return m_tensors; }
    TileRenderer* renderer() const { return m_renderer; }

signals:
    /// The data pass of the shown tensor finished: counts, histogram and list are filled.
    void analysisFinished();
    void exportReproRequested(const QString& caseDir);
    void shrinkRequested(const QString& caseDir);
    void rerunRequested(const QString& caseDir);

private:
    // The widgets, top to bottom, and their wiring (TensorInspectorUi.cpp).
    void buildUi();
    void buildHeader(QWidget* page, QVBoxLayout* layout);
    QPushButton* buildControls(QWidget* page, QVBoxLayout* layout);
    QWidget* buildPanes(QWidget* page);
    QWidget* buildLists(QWidget* page);
    QHBoxLayout* buildActions(QWidget* page);
    void wireControls(QPushButton* fit);
    void showError(const QString& message);
    void selectTensor(int output, int input);
    void onAnalysed(quint64 generation, std::shared_ptr<const TensorAnalysis> analysis);
    void updateSources();
    void updateHover();
    void updateLegends();
    void step(bool forward);
    void setStatus(const QString& text);

    QThreadPool* m_tilePool = nullptr;
    QThreadPool* m_analysisPool = nullptr;
    TensorViewport* m_view = nullptr;
    TileRenderer* m_renderer = nullptr;
    AnalysisPass* m_pass = nullptr;

    QStackedWidget* m_pages = nullptr;
    QLabel* m_errorLabel = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_failure = nullptr;
    QLabel* m_warning = nullptr;
    QComboBox* m_tensorBox = nullptr;
    QComboBox* m_modeBox = nullptr;
    SliceControls* m_slice = nullptr;
    QPushButton* m_prev = nullptr;
    QPushButton* m_next = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_paneTitles[3] = {};
    QWidget* m_paneBoxes[3] = {};
    TensorCanvas* m_canvases[3] = {};
    ColorLegend* m_valueLegend = nullptr;
    ColorLegend* m_diffLegend = nullptr;
    QLabel* m_hover = nullptr;
    QLabel* m_status = nullptr;
    ErrorHistogramView* m_histogram = nullptr;
    MismatchListModel* m_mismatches = nullptr;
    QTableView* m_mismatchView = nullptr;
    CaseTensorsModel* m_tensors = nullptr;
    QTableView* m_tensorView = nullptr;

    QString m_error;
    std::shared_ptr<const CaseData> m_data;
    std::uint64_t m_caseGeneration = 0;
    int m_output = -1;  ///< shown output, or -1 when an input is shown
    int m_input = -1;   ///< shown input tensor (an index into CaseData::tensors())
    std::shared_ptr<const TensorAnalysis> m_analysis;
    quint64 m_passGeneration = 0;
    std::int64_t m_cursor = -1;
    bool m_fitPending = false;
};

} // namespace kf::ui
