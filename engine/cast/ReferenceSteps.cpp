#include "engine/cast/ReferenceSteps.h"

namespace kf::cast {

Result<gen::ReferenceSteps> referenceSteps(const Task& task)
{
    return gen::opReferenceSteps(task);
}

} // namespace kf::cast
