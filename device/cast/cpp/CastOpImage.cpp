// The image a device runs (CastOp.h): the package's cubin or PTX chosen for its architecture,
// loaded once per device in its primary context, or the reason the op falls back to its reference.
#include "device/cast/cpp/CastOp.h"

#include "device/CudaDriver.h"

namespace kf_cast::detail {

CastOp::DeviceImage& CastOp::image(int device)
{
    if (device >= 0 && device < kFastDevices)
        if (DeviceImage* d = m_fastDevices[static_cast<std::size_t>(device)].load(std::memory_order_acquire))
            return *d;
    std::lock_guard<std::mutex> lock(m_mutex);
    DeviceImage& loaded = loadImage(device);
    if (device >= 0 && device < kFastDevices)
        m_fastDevices[static_cast<std::size_t>(device)].store(&loaded, std::memory_order_release);
    return loaded;
}

CastOp::DeviceImage& CastOp::loadImage(int device)
{
    DeviceImage& d = m_devices[device];
    if (d.loaded)
        return d;
    d.loaded = true;
    std::vector<std::string> archs;
    for (const auto& [a, bytes] : m_images)
        archs.push_back(a);
    const auto& drv = kf::device::CudaDriver::get();
    if (!drv) {
        d.reason = drv.error().message();
        return d;
    }
    const auto& cu = kf::device::cuda();
    CUdevice dev = 0;
    int major = 0, minor = 0;
    if (cu.cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
        cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
        cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS) {
        d.reason = "the driver cannot describe cuda:" + std::to_string(device);
        return d;
    }
    std::string arch = m_forceImage.empty() ? chooseImage(archs, major, minor) : m_forceImage;
    const std::string sm = "sm_" + std::to_string(major * 10 + minor);
    if (arch.empty() || !m_images.count(arch)) {
        std::string have;
        for (const auto& a : archs)
            have += (have.empty() ? "" : ", ") + a;
        d.reason = arch.empty() ? "no image for " + sm + ": the package has " + have
                                : "the package has no " + arch + " image (it has " + have + ")";
        return d;
    }
    CUcontext ctx = nullptr, current = nullptr;
    CUmodule module = nullptr;
    std::string data = m_images[arch];
    const bool ptx = arch.rfind("compute_", 0) == 0;
    if (ptx)
        data.push_back('\0');
    CUresult rc = cu.cuDevicePrimaryCtxRetain(&ctx, dev);
    const bool switched = rc == CUDA_SUCCESS && cu.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != ctx;
    if (switched)
        rc = cu.cuCtxSetCurrent(ctx);
    if (rc == CUDA_SUCCESS)
        rc = cu.cuModuleLoadData(&module, data.data());
    std::vector<void*> functions;
    for (const LaunchDecl& l : m_launches) {
        if (rc != CUDA_SUCCESS)
            break;
        CUfunction f = nullptr;
        rc = cu.cuModuleGetFunction(&f, module, l.lowered.c_str());
        functions.push_back(reinterpret_cast<void*>(f));
    }
    if (switched)
        cu.cuCtxSetCurrent(current);   // loading (imageUsed() too) leaves the caller's context as it was
    if (rc != CUDA_SUCCESS) {
        const char* text = nullptr;
        cu.cuGetErrorString(rc, &text);
        d.reason = "loading " + arch + " failed: " + (text ? text : "CUDA error " + std::to_string(rc));
        return d;
    }
    d.functions = std::move(functions);
    d.reason = ptx ? "PTX " + arch + ", compiled for " + sm + " by the driver"
                   : "cubin " + arch + (arch == sm ? std::string() : " (runs on " + sm + ")");
    if (!m_forceImage.empty())
        d.reason += " (forced)";
    return d;
}

std::string CastOp::imageUsed(int device)
{
    if (!m_kernels)
        return "reference ops (loaded with kernels=false)";
    DeviceImage& d = image(device);
    return d.functions.empty() ? "reference ops: " + d.reason : d.reason;
}

} // namespace kf_cast::detail
