#include "device/GuardedBuffer.h"

#include "device/CudaDriver.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <cstring>

namespace kf::device {

namespace {

std::uint64_t splitmix(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fillRandom(unsigned char* p, size_t n, std::uint64_t& state)
{
    for (size_t i = 0; i < n; i += 8) {
        const std::uint64_t v = splitmix(state);
        std::memcpy(p + i, &v, std::min<size_t>(8, n - i));
    }
}

// How the canary bytes `seen` differ from `written`, counting from the data's edge: the last
// byte of the canary before the data (`beforeData`), the first of the one after it.
GuardViolation compareGuard(const std::string& buffer, bool beforeData, const unsigned char* seen,
                            const unsigned char* written, size_t n)
{
    GuardViolation g{buffer, !beforeData, -1, 0};
    for (size_t k = 0; k < n; ++k) {
        const size_t i = beforeData ? n - 1 - k : k;
        if (seen[i] != written[i]) {
            if (g.offsetBytes < 0)
                g.offsetBytes = static_cast<std::int64_t>(k);
            ++g.changedBytes;
        }
    }
    return g;
}

} // namespace

Result<void> fillDevicePattern(CUdeviceptr dst, size_t count, const std::vector<unsigned char>& element, CUstream stream)
{
    if (count == 0)
        return {};
    switch (element.size()) {
    case 1:
        KF_CU_CHECK(cuMemsetD8Async, dst, element[0], count, stream);
        return {};
    case 2: {
        std::uint16_t v;
        std::memcpy(&v, element.data(), 2);
        KF_CU_CHECK(cuMemsetD16Async, dst, v, count, stream);
        return {};
    }
    case 4: {
        std::uint32_t v;
        std::memcpy(&v, element.data(), 4);
        KF_CU_CHECK(cuMemsetD32Async, dst, v, count, stream);
        return {};
    }
    case 8: {
        // No 64-bit memset: write each 32-bit half as a column of a 2D memset with an 8-byte pitch.
        std::uint32_t lo, hi;
        std::memcpy(&lo, element.data(), 4);
        std::memcpy(&hi, element.data() + 4, 4);
        KF_CU_CHECK(cuMemsetD2D32Async, dst, 8, lo, 1, count, stream);
        KF_CU_CHECK(cuMemsetD2D32Async, dst + 4, 8, hi, 1, count, stream);
        return {};
    }
    default:
        return Error::failed("fill a device buffer", "element size " + std::to_string(element.size()) + " is not 1, 2, 4 or 8");
    }
}

bool exactAllocation()
{
    static const bool exact = [] {
        const char* v = std::getenv("KF_RUNNER_EXACT_ALLOC");
        return v && std::string(v) == "1";
    }();
    return exact;
}

Result<GuardedBuffer> GuardedBuffer::allocate(std::string name, size_t bytes, std::uint64_t seed, CUstream stream)
{
    GuardedBuffer b;
    b.m_name = std::move(name);
    b.m_bytes = bytes;
    b.m_guard = exactAllocation() ? 0 : kGuardBytes;
    auto mem = DeviceMemory::allocate(std::max<size_t>(b.m_guard + bytes + b.m_guard, 1));
    if (!mem) {
        Error e = mem.error();
        e.what = "allocate " + std::to_string(bytes) + " bytes for " + b.m_name;
        return e;
    }
    b.m_memory = std::move(mem.value());
    std::uint64_t state = seed;
    fillRandom(b.m_before.data(), b.m_guard, state);
    fillRandom(b.m_after.data(), b.m_guard, state);
    if (auto r = b.writeGuards(stream); !r)
        return r.error();
    return b;
}

Result<void> GuardedBuffer::writeGuards(CUstream stream) const
{
    if (m_guard == 0)
        return {};
    const CUdeviceptr base = m_memory.ptr();
    KF_CU_CHECK(cuMemcpyHtoDAsync, base, m_before.data(), m_guard, stream);
    KF_CU_CHECK(cuMemcpyHtoDAsync, base + m_guard + m_bytes, m_after.data(), m_guard, stream);
    KF_CU_CHECK(cuStreamSynchronize, stream);
    return {};
}

Result<std::vector<GuardViolation>> GuardedBuffer::checkGuards(CUstream stream) const
{
    std::vector<GuardViolation> v;
    if (m_guard == 0)
        return v;
    std::array<unsigned char, kGuardBytes> before{}, after{};
    const CUdeviceptr base = m_memory.ptr();
    KF_CU_CHECK(cuMemcpyDtoHAsync, before.data(), base, m_guard, stream);
    KF_CU_CHECK(cuMemcpyDtoHAsync, after.data(), base + m_guard + m_bytes, m_guard, stream);
    KF_CU_CHECK(cuStreamSynchronize, stream);
    for (const GuardViolation& g : {compareGuard(m_name, true, before.data(), m_before.data(), kGuardBytes),
                                    compareGuard(m_name, false, after.data(), m_after.data(), kGuardBytes)})
        if (g.changedBytes)
            v.push_back(g);
    return v;
}

Result<void> GuardedBuffer::upload(const void* host, CUstream stream) const
{
    if (m_bytes == 0)
        return {};
    KF_CU_CHECK(cuMemcpyHtoDAsync, ptr(), host, m_bytes, stream);
    KF_CU_CHECK(cuStreamSynchronize, stream);
    return {};
}

Result<void> GuardedBuffer::download(void* host, CUstream stream) const
{
    if (m_bytes == 0)
        return {};
    KF_CU_CHECK(cuMemcpyDtoHAsync, host, ptr(), m_bytes, stream);
    KF_CU_CHECK(cuStreamSynchronize, stream);
    return {};
}

Result<void> GuardedBuffer::fillPattern(const std::vector<unsigned char>& element, CUstream stream) const
{
    if (element.empty() || m_bytes % element.size() != 0)
        return Error::failed("fill " + m_name, "the buffer size is not a multiple of the element size");
    if (auto r = fillDevicePattern(ptr(), m_bytes / element.size(), element, stream); !r)
        return r;
    KF_CU_CHECK(cuStreamSynchronize, stream);
    return {};
}

Result<void> GuardedBuffer::zero(CUstream stream) const
{
    if (m_bytes == 0)
        return {};
    KF_CU_CHECK(cuMemsetD8Async, ptr(), 0, m_bytes, stream);
    KF_CU_CHECK(cuStreamSynchronize, stream);
    return {};
}

} // namespace kf::device
