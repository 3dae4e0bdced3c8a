#pragma once
// Diagnostics as a table: one row per kf::Diagnostic, in the order given: the compiler's (NVRTC,
// ptxas) and, after a verification under compute-sanitizer, its findings (the Source column says which).

#include "engine/compile/Diagnostic.h"

#include <QAbstractTableModel>

#include <vector>

namespace kf::ui {

/// GUI thread only. Holds a copy of the diagnostics it shows; setDiagnostics resets it.
class DiagnosticsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Severity, Source, File, Line, ColumnNumber, Code, Message, ColumnCount };
    enum Role {
        /// Sort key: severity rank (error < warning < remark < note), line and column as
        /// numbers, text otherwise.
        SortRole = Qt::UserRole + 1,
        /// Severity name ("error", "warning", ...) in every column, for filtering.
        SeverityRole,
    };

    explicit DiagnosticsModel(QObject* parent = nullptr);

    void setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics);
    /// The folder File is shown relative to (the workspace): "vector_add/optimized.cu". A file
    /// outside it shows its name; the tooltip always has the full path. Empty: names only.
    void setBaseDirectory(const QString& dir);
    QString baseDirectory() const { return m_base; }
    /// What the File column shows for `path`.
    QString displayPath(const QString& path) const;
    const std::vector<kf::Diagnostic>& diagnostics() const { return m_diagnostics; }
    /// `row` must be in [0, rowCount()).
    const kf::Diagnostic& diagnosticAt(int row) const;

    /// How many diagnostics have severity `s`.
    int count(kf::Diagnostic::Severity s) const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<kf::Diagnostic> m_diagnostics;
    QString m_base;
};

} // namespace kf::ui
