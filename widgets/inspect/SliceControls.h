#pragma once
// Chooses the displayed slice: which axes are rows and columns, the index of every other axis
// (spin boxes, so the user steps through them), and for a 1-D tensor the wrap width.

#include "widgets/inspect/SliceSpec.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QSpinBox;

namespace kf::ui {

/// GUI thread only.
class SliceControls : public QWidget {
    Q_OBJECT

public:
    explicit SliceControls(QWidget* parent = nullptr);

    /// Shows `slice` without emitting sliceEdited(); rebuilds the controls when the rank changes.
    void setSlice(const SliceSpec& slice);
    const SliceSpec& slice() const { return m_slice; }
    /// The spin box of a fixed axis (null for a displayed one), the wrap box (1-D only).
    QSpinBox* axisSpin(int axis) const;
    QSpinBox* wrapSpin() const;
    QComboBox* rowAxisBox() const { return m_rowAxis; }
    QComboBox* colAxisBox() const { return m_colAxis; }

signals:
    void sliceEdited(const kf::ui::SliceSpec& slice);

private:
    void rebuild();
    void sync();
    void onAxisChosen(bool rows);

    SliceSpec m_slice;
    QHBoxLayout* m_layout = nullptr;
    QLabel* m_axesLabel = nullptr;
    QComboBox* m_rowAxis = nullptr;
    QComboBox* m_colAxis = nullptr;
    QLabel* m_wrapLabel = nullptr;
    QSpinBox* m_wrap = nullptr;
    std::vector<QWidget*> m_fixedWidgets;  ///< label + spin per axis (rebuilt with the rank)
    std::vector<QSpinBox*> m_spins;        ///< per axis
    bool m_syncing = false;
};

} // namespace kf::ui
