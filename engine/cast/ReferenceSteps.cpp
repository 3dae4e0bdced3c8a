#include "engine/cast/ReferenceSteps.h"

#include "engine/cast/ScriptTape.h"

namespace kf::cast {

Result<gen::ReferenceSteps> referenceSteps(const Task& task)
{
    if (task.reference.kind != Reference::Kind::TorchScript)
        return gen::opReferenceSteps(task);
    auto steps = scriptTape(task);
    if (!steps)
        return steps.error();
    gen::ReferenceSteps r;
    r.steps = std::move(steps.value());
    r.file = (task.directory / task.reference.torchscript).string();
    // The tape has no line per step; a refusal names the module's forward.
    r.pointers.assign(r.steps.size(), "forward");
    return r;
}

} // namespace kf::cast
