#pragma once
// kf_cast: load a KernelForge .cast package into a LibTorch program. Every op of the package
// becomes the operator cast::<name> (CUDA, CPU and Meta kernels), so C++ callers (through the
// dispatcher), TorchScript and Python (after torch.ops.load_library) reach it. The format and
// the rules a package must pass are in docs/cast-format.md; usage in docs/cast.md.
//
//     auto pkg = kf_cast::load("ops.cast");
//     auto op = c10::Dispatcher::singleton().findSchemaOrThrow("cast::softmax_fp32", "")
//                   .typed<at::Tensor(const at::Tensor&)>();
//     at::Tensor y = op.call(x);
//
// This header includes no LibTorch header. Link the CMake target kf_cast::kf_cast.

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kf_cast {

struct LoadOptions {
    /// false: every op runs its reference ATen ops instead of its kernels (said once).
    bool kernels = true;
    /// "compute_80", "sm_86": use this image on every GPU instead of choosing one (try the PTX path).
    std::string image;
};

struct OpInfo {
    std::string name;          ///< the operator is cast::<name>
    std::string registryId;
    std::string schema;
    std::vector<std::string> images;   ///< "sm_80", ..., "compute_80"
    std::string evidenceJson;          ///< the manifest's evidence summary, as JSON text
};

class Package {
public:
    virtual ~Package() = default;
    virtual const std::string& path() const = 0;
    virtual const std::string& name() const = 0;
    virtual const std::string& version() const = 0;
    virtual const std::vector<OpInfo>& ops() const = 0;
    /// How calls of `op` on CUDA device `device` run: "cubin sm_90", "PTX compute_80, compiled for
    /// sm_90 by the driver", or "reference ops: <why>". Loads the module on first use.
    virtual std::string imageUsed(const std::string& op, int device) const = 0;
    /// Off by default: a cast:: op of this package that raises at run time is an error. On: it
    /// runs its reference ATen ops instead, says so once per op and counts every such call.
    /// (Shared with any other loaded package holding the same op: see fallbacks().)
    virtual void allowFallback(bool on) const = 0;
    /// Per op, the calls that fell back so far in this process. An op loaded by several packages
    /// (the same kernels) is one operator: its switch and its count are shared.
    virtual std::vector<std::pair<std::string, long long>> fallbacks() const = 0;
};

/// Checks the package completely, then registers every op. Loading the same package again
/// returns the same Package; another op under a taken name throws. Errors throw
/// std::runtime_error naming the file, the entry or manifest field, and the problem.
std::shared_ptr<const Package> load(const std::string& path, const LoadOptions& options = {});

/// The image a GPU of compute capability major.minor uses from `images` (empty when none fits):
/// the exact cubin, a cubin of the same major and a lower minor, else PTX at or below it.
std::string chooseImage(const std::vector<std::string>& images, int major, int minor);

} // namespace kf_cast
