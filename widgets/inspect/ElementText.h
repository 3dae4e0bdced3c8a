#pragma once
// How the inspector writes numbers, indices and classes, the same in the hover bar, the
// mismatch list and the tooltips.

#include "engine/verify/Compare.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace kf::ui::elementtext {

/// "[3, 5]"; "[]" for a 0-d tensor.
QString index(const std::vector<std::int64_t>& idx);
/// Seven significant digits; "nan", "inf", "-inf" spelled as the reports spell them.
QString number(double v);
/// Three significant digits, for errors and ratios.
QString shortNumber(double v);
/// "ok", "outside tolerance", "NaN/Inf mismatch", "never written".
QString className(ElementClass c);
/// |actual − expected| ÷ |expected| as compareOutput computes it (inf for expected 0 with an error).
double relError(double expected, const ElementVerdict& v);

} // namespace kf::ui::elementtext
