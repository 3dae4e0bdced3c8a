#include "widgets/common/SpinBox.h"

#include <QSpinBox>

namespace kf::ui {

QSpinBox* rangeSpinBox(const QString& objectName, QWidget* parent, int lo, int hi, const QString& suffix, int step)
{
    auto* spin = new QSpinBox(parent);
    if (!objectName.isEmpty())
        spin->setObjectName(objectName);
    spin->setRange(lo, hi);
    spin->setSingleStep(step);
    spin->setSuffix(suffix);
    return spin;
}

} // namespace kf::ui
