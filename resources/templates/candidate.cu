// ${FILE}: a new candidate for task ${TASK}. The signature follows the task's launch plan
// (kernel ${KERNEL}, arguments in order); fill in the body, then Verify.
#include <kf/prelude.cuh>

${TEMPLATE}__global__ void ${NAME}(${PARAMS})
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    (void)i;
}
