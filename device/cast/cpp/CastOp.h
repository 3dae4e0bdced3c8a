#pragma once
// One cast:: operator of a loaded package, in C++: argument checks and shape binding, launch
// plans evaluated from the manifest's expressions (cached per input shape), the image chosen per
// device, the launch on PyTorch's current stream, and the reference ATen ops as the fallback.
// The rules are those of the Python runtime (device/cast/python/kernelforge_cast/_ops.py) and of
// docs/cast.md. Includes ATen: only kf_cast's own translation units include it.

#include "engine/cast/CastPackage.h"
#include "engine/task/Expr.h"
#include "include/kf_cast/kf_cast.h"

#include <ATen/ATen.h>

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace kf_cast::detail {

enum class Mode { Cuda, Cpu, Meta };

/// A TorchScript reference: inputs in the order the module takes them -> its outputs.
using ScriptFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;
/// Loads a module saved with torch.jit.save from its bytes (CastScript.cpp: its own translation
/// unit, because <torch/script.h> is the slowest LibTorch header to compile).
ScriptFn loadScript(const std::string& bytes, const std::string& origin);

class CastOp {
public:
    CastOp(const kf::cast::Package& package, const kf::cast::PackageOp& op, const LoadOptions& options);

    const std::string& name() const { return m_name; }
    std::size_t inputCount() const { return m_inputs.size(); }
    std::vector<at::Tensor> run(c10::ArrayRef<at::Tensor> inputs, Mode mode);
    std::string imageUsed(int device);
    /// Why a call with tensors of these shapes and dtypes (meta tensors do) would be refused:
    /// dtype, rank, fixed extents, symbol ranges, constraints; empty when it would not.
    std::string refusal(c10::ArrayRef<at::Tensor> inputs) const;
    /// With fallback allowed, a call that raises runs the reference ops instead: said once,
    /// every time counted (`kforge cast run --allow-fallback`). Off by default: a raise is an error.
    void allowFallback(bool on) { m_allowFallback.store(on); }
    std::int64_t fallbacks() const { return m_fallbacks.load(); }

private:
    struct Dim {
        std::string symbol;          ///< empty: a fixed extent
        std::int64_t value = 0;
    };
    struct TensorDecl {
        std::string name, dtype;
        at::ScalarType type = at::kFloat;
        std::vector<Dim> dims;
    };
    struct ArgDecl {
        int tensor = -1;             ///< index into inputs + outputs + scratch, or -1 for a scalar
        kf::Expr scalar;
        std::string type;
    };
    struct LaunchDecl {
        std::string kernel, lowered;
        kf::Expr grid[3], block[3], shared;
        std::vector<ArgDecl> args;
    };
    struct ScratchDecl {
        at::ScalarType type = at::kFloat;
        kf::Expr count;
        bool zero = true;
    };
    struct Plan {
        std::vector<std::vector<std::int64_t>> outputs;
        std::vector<std::int64_t> scratch;
        struct Launch {
            int index = 0;
            unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
            unsigned shared = 0;
            std::vector<int> tensors;                          ///< per argument: buffer index or -1
            std::vector<std::array<unsigned char, 8>> scalars; ///< per argument: the C value
        };
        std::vector<Launch> launches;
    };
    struct DeviceImage {
        bool loaded = false;
        std::vector<void*> functions;  ///< CUfunction per launch; empty: use the reference
        std::string reason;
        std::map<int, unsigned> sharedRaised;   ///< launch -> the dynamic shared memory allowed so far
    };
    struct RefStep {
        std::function<at::Tensor(const std::array<const at::Tensor*, 3>&)> fn;
        std::array<int, 3> args{-1, -1, -1};
        int slot = -1;
    };

    // Reading the manifest entry (the constructor's parts).
    static std::vector<TensorDecl> tensorDecls(const nlohmann::json& list);
    LaunchDecl launchDecl(const nlohmann::json& launch) const;   ///< after m_bufferNames is complete
    void loadTape(const kf::cast::Package& package, const nlohmann::json& reference);

    [[noreturn]] void bad(const std::string& what) const;
    std::vector<at::Tensor> runOnce(c10::ArrayRef<at::Tensor> inputs, Mode mode);
    std::vector<at::Tensor> metaOutputs(c10::ArrayRef<at::Tensor> inputs) const;
    void checkKernelArguments(c10::ArrayRef<at::Tensor> inputs, const at::Device& device) const;
    /// Every launch of the plan on the device's current stream, over these buffers.
    void launchAll(const Plan& plan, DeviceImage& img, int device, c10::ArrayRef<at::Tensor> inputs,
                   const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& scratch);
    void raiseSharedLimit(DeviceImage& img, const Plan::Launch& launch);   ///< takes m_mutex
    kf::Env bind(c10::ArrayRef<at::Tensor> inputs, bool checkRanges) const;
    const Plan& plan(int device, c10::ArrayRef<at::Tensor> inputs);   // CastOpPlan.cpp
    Plan makePlan(const kf::Env& env) const;
    Plan::Launch planLaunch(std::size_t index, const kf::Env& env) const;
    std::array<unsigned char, 8> scalarArg(std::size_t launch, const ArgDecl& arg, const kf::Env& env) const;
    DeviceImage& image(int device);       // CastOpImage.cpp
    DeviceImage& loadImage(int device);   ///< under m_mutex
    std::vector<at::Tensor> reference(c10::ArrayRef<at::Tensor> inputs);
    std::vector<at::Tensor> finish(std::vector<at::Tensor> outs) const;
    void warnOnce(const std::string& key, const std::string& text);

    std::string m_name, m_qualified;
    std::vector<TensorDecl> m_inputs, m_outputs;
    kf::Env m_parameters;
    struct SymbolRange {
        std::int64_t min, max, multipleOf;
    };
    std::map<std::string, SymbolRange> m_symbols;
    std::vector<kf::Expr> m_constraints;
    std::vector<LaunchDecl> m_launches;
    std::vector<ScratchDecl> m_scratch;
    std::vector<std::string> m_bufferNames;
    std::map<std::string, std::string> m_images;   ///< arch -> bytes
    bool m_kernels = true;
    std::string m_forceImage;

    // Reference: a tape over slots (inputs first) or a TorchScript module.
    std::vector<RefStep> m_tape;
    std::vector<int> m_outputSlots;
    std::size_t m_slotCount = 0;
    ScriptFn m_script;
    std::vector<int> m_scriptInputs;

    std::mutex m_mutex;
    std::map<int, DeviceImage> m_devices;
    static constexpr int kFastDevices = 64;
    std::array<std::atomic<DeviceImage*>, kFastDevices> m_fastDevices{};   ///< loaded images, read without the lock
    struct PlanNode {
        Plan plan;
        std::vector<std::int64_t> key;   ///< a copy of the map key, for the lock-free fast path
    };
    std::map<std::vector<std::int64_t>, PlanNode> m_plans;   ///< never shrinks (calls may hold a plan): capped
    std::atomic<const PlanNode*> m_last{nullptr};            ///< the plan of the last shape, checked first
    std::set<std::string> m_warned;
    std::atomic<bool> m_allowFallback{false};
    std::atomic<std::int64_t> m_fallbacks{0};
};

/// What kf_cast::load returns: the ops it registered and the package they came from (models).
class LoadedPackage final : public Package {
public:
    const std::string& path() const override { return m_path; }
    const std::string& name() const override { return m_name; }
    const std::string& version() const override { return m_version; }
    const std::vector<OpInfo>& ops() const override { return m_info; }
    std::string imageUsed(const std::string& op, int device) const override
    {
        for (const auto& o : m_ops)
            if (o->name() == op)
                return o->imageUsed(device);
        throw std::runtime_error(m_path + " has no op " + op);
    }
    void allowFallback(bool on) const override
    {
        for (const auto& o : m_ops)
            o->allowFallback(on);
    }
    std::vector<std::pair<std::string, long long>> fallbacks() const override
    {
        std::vector<std::pair<std::string, long long>> out;
        for (const auto& o : m_ops)
            out.emplace_back(o->name(), static_cast<long long>(o->fallbacks()));
        return out;
    }

    std::string m_path, m_name, m_version;
    std::vector<OpInfo> m_info;
    std::vector<std::shared_ptr<CastOp>> m_ops;
    std::shared_ptr<const kf::cast::Package> m_source;   ///< the checked package: manifest and files
};

} // namespace kf_cast::detail
