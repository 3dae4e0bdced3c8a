#include "device/SharedMemoryPoison.h"

#include "device/CudaDriver.h"

#include <string>

namespace kf::device {

namespace {

// kf_poison_shared(words, pattern): every thread of the block stores `pattern` to its share of
// the block's dynamic shared memory. The trailing read keeps the stores from being dropped.
const char* kPtx = R"PTX(
.version 7.0
.target sm_70
.address_size 64
.extern .shared .align 16 .b8 kf_poison_smem[];
.visible .entry kf_poison_shared(.param .u32 words, .param .u32 pattern)
{
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    ld.param.u32 %r1, [words];
    ld.param.u32 %r2, [pattern];
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, kf_poison_smem;
LOOP:
    setp.ge.u32 %p1, %r3, %r1;
    @%p1 bra DONE;
    shl.b32 %r6, %r3, 2;
    add.u32 %r7, %r5, %r6;
    st.shared.u32 [%r7], %r2;
    add.u32 %r3, %r3, %r4;
    bra LOOP;
DONE:
    bar.sync 0;
    ld.shared.u32 %r8, [%r5];
    setp.eq.u32 %p2, %r8, 1234567;
    @%p2 st.shared.u32 [%r5+4], %r8;
    ret;
}
)PTX";

} // namespace

Result<SharedMemoryPoison> SharedMemoryPoison::load(const DeviceInfo& device)
{
    SharedMemoryPoison p;
    auto module = CudaModule::loadPtx(kPtx, "the shared-memory poison kernel");
    if (!module)
        return module.error();
    p.m_module = std::move(module.value());
    auto f = p.m_module.function("kf_poison_shared", "kf_poison_shared");
    if (!f)
        return f.error();
    p.m_kernel = f.value();
    p.m_bytes = device.maxSharedPerBlockOptin > 0 ? device.maxSharedPerBlockOptin : device.maxSharedPerBlock;
    p.m_bytes -= p.m_bytes % 16;
    if (auto r = CudaModule::allowDynamicShared(p.m_kernel, p.m_bytes); !r)
        return r.error();
    p.m_blocks = 2 * (device.smCount > 0 ? device.smCount : 1);
    return p;
}

Result<void> SharedMemoryPoison::fill(std::uint8_t byte, CUstream stream) const
{
    unsigned words = static_cast<unsigned>(m_bytes / 4);
    unsigned pattern = 0x01010101u * byte;
    void* args[] = {&words, &pattern};
    if (const CUresult r = KF_CU(cuLaunchKernel, m_kernel, m_blocks, 1, 1, 1024, 1, 1, static_cast<unsigned>(m_bytes), stream, args, nullptr);
        r != CUDA_SUCCESS) {
        Error e = cuError(r, "cuLaunchKernel", __FILE__, __LINE__);
        e.what = "poison shared memory";
        return e;
    }
    if (const CUresult r = KF_CU(cuStreamSynchronize, stream); r != CUDA_SUCCESS) {
        Error e = cuError(r, "cuStreamSynchronize", __FILE__, __LINE__);
        e.what = "poison shared memory";
        return e;
    }
    return {};
}

} // namespace kf::device
