#pragma once
// The registry browser: the verified kernels as a filterable, sortable table, and for the selected
// version its evidence, source, reports, speedup chart and a diff against another version. It
// reads nothing itself and changes nothing: the app feeds it the index and an entry's details and
// answers its requests (open, re-verify, deprecate, remove, export, diff), confirmations included.

#include "engine/registry/Registry.h"
#include "widgets/registry/RegistryDetails.h"

#include <QString>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace kf::ui {

class DiffView;
class ElidedLabel;
class KernelEditor;
class RegistryFilterModel;
class RegistryModel;
class ResultsModel;
class SpeedupChart;

/// GUI thread only; owned by its Qt parent (the main window's dock).
///
/// Flow: setIndex() on every (re)load; the table keeps its selection across refreshes. Selecting
/// a row emits currentChanged(id); the app answers with setDetails() for that id (details for
/// another id are ignored, so late answers cannot paint the wrong kernel). Once the details are
/// in, the Diff tab offers the other versions of the same op and emits diffRequested(id, other);
/// the app answers with setDiff().
class RegistryBrowser : public QWidget {
    Q_OBJECT

public:
    enum Tab { EvidenceTab, SourceTab, ReportsTab, ChartTab, DiffTab };

    explicit RegistryBrowser(QWidget* parent = nullptr);

    /// The registry folder shown above the table (full path in its tooltip).
    void setDirectory(const QString& path);
    QString directory() const { return m_directory; }
    /// The index as loaded; refreshes the table in place and clears any load error.
    void setIndex(const kf::RegistryIndex& index);
    /// The index could not be loaded: `sentence` (what happened and what to do) is shown above
    /// the table, which keeps the last good index.
    void setLoadError(const QString& sentence);
    /// Fills the details pane when `details.entry.id` is the current entry; ignored otherwise.
    void setDetails(const RegistryDetails& details);
    /// The source of `otherId`, to diff against `id`; ignored unless both are still what the Diff
    /// tab shows. A non-empty `error` (a sentence) is shown instead of a diff.
    void setDiff(const QString& id, const QString& otherId, const QString& otherSource, const QString& error = {});

    /// The selected entry's ID, empty when none.
    QString currentId() const;
    /// Selects `id` (clearing the filter if it hides it); false when the index does not list it.
    bool selectId(const QString& id);

    // Parts, for the app's shortcuts and for tests.
    RegistryModel* model() const { return m_model; }
    RegistryFilterModel* filterModel() const { return m_filter; }
    QTableView* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filterEdit; }
    QCheckBox* showDeprecatedBox() const { return m_showDeprecated; }
    QPushButton* openButton() const { return m_open; }
    QPushButton* reverifyButton() const { return m_reverify; }
    QPushButton* deprecateButton() const { return m_deprecate; }
    QPushButton* removeButton() const { return m_remove; }
    QPushButton* exportButton() const { return m_export; }
    QTabWidget* tabs() const { return m_tabs; }
    QTextBrowser* evidenceView() const { return m_evidence; }
    KernelEditor* sourceView() const { return m_source; }
    ResultsModel* reportsModel() const { return m_reports; }
    SpeedupChart* chart() const { return m_chart; }
    QComboBox* diffCombo() const { return m_diffWith; }
    DiffView* diffView() const { return m_diff; }
    /// True when the table is replaced by the placeholder sentence (empty registry, nothing matches).
    bool placeholderShown() const;
    QString placeholderText() const;

signals:
    /// The selection moved; `id` is empty when nothing is selected.
    void currentChanged(const QString& id);
    void openAsCandidateRequested(const QString& id);
    void reverifyRequested(const QString& id);
    void deprecateRequested(const QString& id);
    void removeRequested(const QString& id);
    /// Export .cast…: `id` is the selected version (the dialog lets the user add others).
    void exportRequested(const QString& id);
    /// The Diff tab wants `otherId`'s source to compare with `id`'s: answer with setDiff().
    void diffRequested(const QString& id, const QString& otherId);

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    QWidget* buildDetails();
    void buildTable();
    void wireSignals();
    QHBoxLayout* buildDetailsHeader(QWidget* details);
    QWidget* buildReportsTable();
    QWidget* buildDiffPage();
    void onCurrentRowChanged();
    void updateButtons();
    void updatePlaceholder();
    void fitIdColumn();
    void clearDetails(const QString& message);
    void renderEvidence();
    void fillDiffCombo();
    void requestDiff();
    void emitFor(void (RegistryBrowser::*signal)(const QString&));

    QString m_directory;
    kf::RegistryIndex m_index;
    bool m_indexLoaded = false;
    RegistryDetails m_details;
    bool m_haveDetails = false;
    QString m_lastCurrent;
    bool m_splitterSized = false;

    RegistryModel* m_model = nullptr;
    RegistryFilterModel* m_filter = nullptr;

    QWidget* m_directoryRow = nullptr;
    ElidedLabel* m_directoryLabel = nullptr;
    QLabel* m_loadError = nullptr;
    QLineEdit* m_filterEdit = nullptr;
    QCheckBox* m_showDeprecated = nullptr;
    QSplitter* m_splitter = nullptr;
    QStackedWidget* m_tableStack = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_placeholder = nullptr;

    QWidget* m_detailsPane = nullptr;
    ElidedLabel* m_title = nullptr;
    QPushButton* m_open = nullptr;
    QPushButton* m_reverify = nullptr;
    QPushButton* m_deprecate = nullptr;
    QPushButton* m_remove = nullptr;
    QPushButton* m_export = nullptr;
    QTabWidget* m_tabs = nullptr;
    QTextBrowser* m_evidence = nullptr;
    KernelEditor* m_source = nullptr;
    ResultsModel* m_reports = nullptr;
    QTableView* m_reportsTable = nullptr;
    SpeedupChart* m_chart = nullptr;
    QComboBox* m_diffWith = nullptr;
    DiffView* m_diff = nullptr;
};

} // namespace kf::ui
