#include "widgets/inspect/SliceControls.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>

#include <climits>

namespace kf::ui {

SliceControls::SliceControls(QWidget* parent) : QWidget(parent)
{
    m_layout = new QHBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_axesLabel = new QLabel(tr("Rows × columns:"), this);
    m_rowAxis = new QComboBox(this);
    m_rowAxis->setToolTip(tr("The axis shown down the panes"));
    m_colAxis = new QComboBox(this);
    m_colAxis->setToolTip(tr("The axis shown across the panes"));
    m_rowAxis->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_colAxis->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_wrapLabel = new QLabel(tr("Wrap:"), this);
    m_wrap = new QSpinBox(this);
    m_wrap->setRange(1, 1 << 24);
    m_wrap->setToolTip(tr("Elements per displayed row of a 1-D tensor; the hover still shows the true index"));
    m_layout->addWidget(m_axesLabel);
    m_layout->addWidget(m_rowAxis);
    m_layout->addWidget(m_colAxis);
    m_layout->addWidget(m_wrapLabel);
    m_layout->addWidget(m_wrap);
    connect(m_rowAxis, &QComboBox::activated, this, [this] { onAxisChosen(true); });
    connect(m_colAxis, &QComboBox::activated, this, [this] { onAxisChosen(false); });
    connect(m_wrap, &QSpinBox::valueChanged, this, [this](int w) {
        if (m_syncing)
            return;
        m_slice.wrap = w;
        emit sliceEdited(m_slice);
    });
    rebuild();
}

QSpinBox* SliceControls::axisSpin(int axis) const
{
    if (axis < 0 || axis >= static_cast<int>(m_spins.size()))
        return nullptr;
    return axis == m_slice.rowAxis || axis == m_slice.colAxis ? nullptr : m_spins[static_cast<size_t>(axis)];
}

QSpinBox* SliceControls::wrapSpin() const
{
    return m_slice.rank() == 1 ? m_wrap : nullptr;
}

void SliceControls::setSlice(const SliceSpec& slice)
{
    const bool rebuildNeeded = slice.extents != m_slice.extents;
    m_slice = slice;
    if (rebuildNeeded)
        rebuild();
    sync();
}

void SliceControls::rebuild()
{
    for (QWidget* w : m_fixedWidgets)
        delete w;
    m_fixedWidgets.clear();
    m_spins.assign(static_cast<size_t>(m_slice.rank()), nullptr);
    const bool nd = m_slice.rank() >= 2;
    m_axesLabel->setVisible(nd);
    m_rowAxis->setVisible(nd);
    m_colAxis->setVisible(nd);
    m_wrapLabel->setVisible(m_slice.rank() == 1);
    m_wrap->setVisible(m_slice.rank() == 1);
    m_syncing = true;
    m_rowAxis->clear();
    m_colAxis->clear();
    for (int a = 0; a < m_slice.rank(); ++a) {
        const QString name = tr("dim %1 (%2)").arg(a).arg(m_slice.extents[static_cast<size_t>(a)]);
        m_rowAxis->addItem(name);
        m_colAxis->addItem(name);
    }
    for (int a = 0; nd && a < m_slice.rank(); ++a) {
        auto* label = new QLabel(tr("dim %1:").arg(a), this);
        auto* spin = new QSpinBox(this);
        spin->setRange(0, static_cast<int>(std::min<std::int64_t>(INT_MAX, m_slice.extents[static_cast<size_t>(a)] - 1)));
        spin->setToolTip(tr("Index of dim %1 shown; step through the slices").arg(a));
        spin->setKeyboardTracking(false);
        m_layout->addWidget(label);
        m_layout->addWidget(spin);
        m_fixedWidgets.push_back(label);
        m_fixedWidgets.push_back(spin);
        m_spins[static_cast<size_t>(a)] = spin;
        connect(spin, &QSpinBox::valueChanged, this, [this, a](int v) {
            if (m_syncing)
                return;
            m_slice.fixed[static_cast<size_t>(a)] = v;
            emit sliceEdited(m_slice);
        });
    }
    m_syncing = false;
}

void SliceControls::sync()
{
    m_syncing = true;
    m_rowAxis->setCurrentIndex(m_slice.rowAxis);
    m_colAxis->setCurrentIndex(m_slice.colAxis);
    m_wrap->setValue(static_cast<int>(m_slice.wrap));
    for (int a = 0; a < static_cast<int>(m_spins.size()); ++a) {
        QSpinBox* spin = m_spins[static_cast<size_t>(a)];
        if (!spin)
            continue;
        // Only the axes not shown in the panes are stepped through.
        const bool displayed = a == m_slice.rowAxis || a == m_slice.colAxis;
        spin->setVisible(!displayed);
        m_fixedWidgets[static_cast<size_t>(2 * a)]->setVisible(!displayed);
        spin->setValue(static_cast<int>(m_slice.fixed[static_cast<size_t>(a)]));
    }
    m_syncing = false;
}

void SliceControls::onAxisChosen(bool rows)
{
    const int chosen = (rows ? m_rowAxis : m_colAxis)->currentIndex();
    int& mine = rows ? m_slice.rowAxis : m_slice.colAxis;
    int& other = rows ? m_slice.colAxis : m_slice.rowAxis;
    if (chosen == mine)
        return;
    if (chosen == other)
        other = mine;  // picking the other pane axis swaps the two
    mine = chosen;
    sync();
    emit sliceEdited(m_slice);
}

} // namespace kf::ui
