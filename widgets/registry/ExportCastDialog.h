#pragma once
// Export .cast…: which registry versions go into the package (the selected one checked), for
// which architectures (cubins) and with which PTX, under which file name, and which models it
// carries with their inputs. It only asks; the app runs the export off the UI thread (docs/cast.md).

#include "engine/registry/Registry.h"

#include <QDialog>
#include <QString>
#include <QStringList>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace kf::ui {

/// A model to carry in the package (`kforge cast export --model NAME=FILE --inputs NAME=FILE`).
struct CastModelChoice {
    QString name;      ///< models/<name>/ in the package
    QString file;      ///< torch.export.save (.pt2) or torch.jit.save output
    QString inputs;    ///< shapes .json or torch.save'd tensors; empty: the .pt2's sample inputs
};

struct CastExportChoice {
    QStringList ids;
    QStringList architectures;   ///< "sm_80", ...
    QString ptx;                 ///< "" = PTX of the lowest architecture, "none", or "compute_XY"
    QString output;
    QString packageVersion;
    QList<CastModelChoice> models;
};

class ExportCastDialog : public QDialog {
    Q_OBJECT

public:
    /// Lists the active versions of `index` (deprecated ones too when `current` is deprecated),
    /// with `current` checked; the file name defaults to `<folder>/<op>.cast`.
    ExportCastDialog(const kf::RegistryIndex& index, const QString& current, const QString& folder,
                     QWidget* parent = nullptr);

    CastExportChoice choice() const;
    /// Why the choice cannot be exported (no version, no architecture, no file), or empty.
    QString problem() const;

    // Parts, for tests.
    QListWidget* versions() const { return m_versions; }
    QList<QCheckBox*> architectureBoxes() const { return m_archs; }
    QComboBox* ptxCombo() const { return m_ptx; }
    QLineEdit* outputEdit() const { return m_output; }
    QTableWidget* modelTable() const { return m_models; }
    /// Adds a model row (what Add Model… does after its file dialog); returns the row.
    int addModel(const QString& file, const QString& inputs = {});

private:
    // The constructor's rows (ExportCastDialog.cpp).
    std::string buildVersions(const kf::RegistryIndex& index, const QString& current);
    void buildTargets(QFormLayout* form);
    void buildOutput(QFormLayout* form, const QString& file);
    void buildModels(QFormLayout* form);
    void update();

    QListWidget* m_versions = nullptr;
    QList<QCheckBox*> m_archs;
    QComboBox* m_ptx = nullptr;
    QLineEdit* m_output = nullptr;
    QLineEdit* m_version = nullptr;
    QTableWidget* m_models = nullptr;
    QPushButton* m_inputsButton = nullptr;
    QPushButton* m_removeModel = nullptr;
    QLabel* m_problem = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

} // namespace kf::ui
