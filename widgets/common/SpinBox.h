#pragma once
// The integer field of the workbench's panels and dialogs (a timeout, a block size, a number of
// attempts): a named QSpinBox with its range, step and unit, made here instead of by the same
// calls in each of them.

#include <QString>

class QSpinBox;
class QWidget;

namespace kf::ui {

/// A new QSpinBox owned by `parent`, named `objectName` (none when empty), taking lo..hi, its
/// arrows stepping by `step`, its value shown with `suffix` (" ms", " threads"; none when empty).
QSpinBox* rangeSpinBox(const QString& objectName, QWidget* parent, int lo, int hi, const QString& suffix = {},
                       int step = 1);

} // namespace kf::ui
