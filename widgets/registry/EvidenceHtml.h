#pragma once
// The Evidence page of a registry entry as HTML: why the registry accepted this kernel (each gate
// and what it found), on what GPU and software, with which seeds, tolerances and held-out shapes,
// and, first of all, what the speedup claims and what it does not.

#include "widgets/registry/RegistryDetails.h"

#include <QString>

namespace kf::ui::evidencehtml {

/// The page for `details`, with `live` (the entry as the index lists it now, or nullptr) giving
/// the current status. `dark` picks colours that read on a dark background.
QString render(const RegistryDetails& details, const kf::RegistryEntry* live, bool dark);

} // namespace kf::ui::evidencehtml
