// The Verifier's candidate side: fresh state for each run, the launches with their watchdog,
// canaries after every launch, the inputs checked and run 0's outputs brought to the host.
#include "device/runner/VerifierTrial.h"

#include "device/CudaDriver.h"
#include "device/runner/TorchBridge.h"
#include "engine/verify/Npy.h"

#include <filesystem>

namespace kf::device {

using namespace verifier;

verifier::InputChange verifier::diffBytes(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b)
{
    InputChange c;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        if (a[i] != b[i]) {
            if (c.firstByte < 0)
                c.firstByte = static_cast<std::int64_t>(i);
            ++c.bytesChanged;
        }
    return c;
}

Result<void> Verifier::runCandidate(const ShapeRef& shape, const std::vector<TensorLayout>& layout, const BufferSet& buffers,
                                    const std::vector<std::vector<unsigned char>>& pristine, int trial, int run, Trial& t)
{
    const std::string where =
        "shape " + shapeName(shape) + " trial " + std::to_string(m_request.firstTrial + trial) + " run " + std::to_string(run);
    if (auto r = prepareRun(layout, buffers, pristine, trial, run, t, where); !r)
        return r.error();

    auto bound = m_program->plan().bind(m_request.task, shape.binding, buffers.pointers(), m_gpu.info);
    if (!bound) {
        t.launchError = bound.error().what + ": " + bound.error().why;
        return {};
    }
    for (const BoundLaunch& l : bound.value()) {
        if (auto r = launchOnce(l, shape, buffers, trial, run, t, where); !r)
            return r.error();
        if (!t.launchError.empty()) // the launch failed: the trial reports it, nothing more runs
            return {};
    }
    return collectRun(layout, buffers, pristine, run, t, where);
}

Result<void> Verifier::prepareRun(const std::vector<TensorLayout>& layout, const BufferSet& buffers,
                                  const std::vector<std::vector<unsigned char>>& pristine, int trial, int run, Trial& t,
                                  const std::string& where)
{
    const std::uint64_t seed = m_request.seeds[static_cast<size_t>(trial)];
    // Fresh state for this run: pristine inputs, canaries, sentinel outputs, zeroed scratch.
    size_t in = 0, outIndex = 0;
    t.sentinel[run].clear();
    for (const auto& l : layout) {
        const GuardedBuffer* b = buffers.find(l.name);
        Result<void> r;
        if (l.role == TensorLayout::Role::Input) {
            // Run 0 may have changed an input: run 1 gets the pristine bytes back.
            r = run > 0 && t.inputsDirty ? b->upload(pristine[in].data(), m_stream) : Result<void>();
            ++in;
        } else if (l.role == TensorLayout::Role::Output) {
            t.sentinel[run].push_back(sentinelBytes(l.dtype, run, deriveSeed(seed, kSentinelSalt + outIndex)));
            r = b->fillPattern(t.sentinel[run].back(), m_stream);
            ++outIndex;
        } else if (l.zero) {
            r = b->zero(m_stream);
        }
        if (!r)
            return trialError(r.error(), where);
    }
    if (run > 0)
        if (auto r = buffers.writeGuards(m_stream); !r)
            return trialError(r.error(), where);
    return {};
}

Result<void> Verifier::launchOnce(const BoundLaunch& l, const ShapeRef& shape, const BufferSet& buffers, int trial, int run,
                                  Trial& t, const std::string& where)
{
    const std::string label = l.describe() + " shape " + shapeName(shape) + " trial " + std::to_string(trial) +
                              " run " + std::to_string(run);
    // Shared memory as the last kernel left it would hide a read of shared memory the
    // candidate never wrote: 0xFF (NaN) before run 0, 0x00 before run 1 (rule 9).
    if (m_gpu.poison)
        if (auto r = m_gpu.poison->fill(run == 0 ? 0xFF : 0x00, m_stream); !r)
            return trialError(r.error(), where);
    m_channel.launchBegin(m_request.id, label, m_request.launchTimeoutMs);
    auto launched = LaunchPlan::enqueue(l, m_stream);
    CUresult sync = CUDA_SUCCESS;
    if (launched)
        sync = KF_CU(cuCtxSynchronize);
    m_channel.launchEnd(m_request.id);
    if (!launched) {
        if (stickyError())
            return fatal(launched.error(), l.describe() + " at " + where);
        const Error& e = launched.error();
        t.launchError = l.describe() + ": " + e.why + (e.hint.empty() ? "" : " (" + e.hint + ")");
        return {};
    }
    if (sync != CUDA_SUCCESS) {
        Error e = cuError(sync, "cuCtxSynchronize", __FILE__, __LINE__);
        e.why = cuResultString(sync) + " (" + cuResultName(sync) + ")";
        if (stickyError())
            return fatal(e, l.describe() + " at " + where);
        t.launchError = e.why + " in " + l.describe();
        return {};
    }
    // Canaries after every launch: a later launch must not hide an earlier one's stray write.
    auto guards = buffers.checkGuards(m_stream);
    if (!guards)
        return trialError(guards.error(), where);
    for (const auto& v : guards.value()) {
        bool seen = false;
        for (const auto& g : t.guards)
            seen = seen || (g.buffer == v.buffer && g.after == v.after);
        if (!seen) {
            t.guards.push_back(v);
            t.guardWhen.push_back("after " + l.describe() + " in run " + std::to_string(run));
        }
    }
    if (!guards->empty())
        if (auto r = buffers.writeGuards(m_stream); !r)
            return trialError(r.error(), where);
    return {};
}

Result<void> Verifier::collectRun(const std::vector<TensorLayout>& layout, const BufferSet& buffers,
                                  const std::vector<std::vector<unsigned char>>& pristine, int run, Trial& t,
                                  const std::string& where)
{
    // Run 0's outputs to the host; inputs checked by their keyed fingerprints on the device
    // (rule 4), and compared byte by byte with the pristine copy only when one changed.
    size_t in = 0;
    t.inputsDirty = false;
    std::vector<std::vector<unsigned char>> outs;
    for (const auto& l : layout) {
        // Run 1's outputs stay on the device, where they are compared; run 0's come to the host
        // so that run 1 cannot find them in memory it can address.
        if (l.role == TensorLayout::Role::Scratch || (l.role == TensorLayout::Role::Output && run > 0))
            continue;
        const GuardedBuffer* b = buffers.find(l.name);
        if (l.role == TensorLayout::Role::Input && l.bytes > kFingerprintBytes) {
            auto print = TorchBridge::fingerprint(RawTensor{reinterpret_cast<void*>(b->ptr()), l.dtype, l.extents, true},
                                                  t.fingerprintKey);
            if (!print)
                return trialError(print.error(), where);
            if (print.value() == t.inputPrints[in++])
                continue;
            t.inputsDirty = true;
        } else if (l.role == TensorLayout::Role::Input) {
            ++in;
        }
        std::vector<unsigned char> host(l.bytes);
        if (auto r = b->download(host.data(), m_stream); !r)
            return trialError(r.error(), where);
        if (l.role == TensorLayout::Role::Output) {
            outs.push_back(std::move(host));
            continue;
        }
        const InputChange c = diffBytes(host, pristine[in - 1]);
        t.inputsDirty = t.inputsDirty || c.bytesChanged > 0;
        if (c.bytesChanged > 0 && !t.changes.count(l.name)) {
            t.changes[l.name] = c;
            t.modified.push_back(l.name);
        }
    }
    t.outputs[run] = std::move(outs);
    return {};
}

Result<void> Verifier::fillInputs(const std::vector<const TensorLayout*>& inputs, const BufferSet& buffers, int trial,
                                  std::uint64_t seed, nlohmann::json& distributions,
                                  std::vector<std::vector<unsigned char>>& pristine)
{
    for (size_t i = 0; i < inputs.size(); ++i) {
        const TensorLayout& l = *inputs[i];
        const GuardedBuffer* b = buffers.find(l.name);
        if (!m_request.inputsDir.empty()) {
            // A repro: the exact bytes a failing trial saw, whatever GPU drew them.
            auto bytes = readNpyExpecting(std::filesystem::path(m_request.inputsDir) / (l.name + ".npy"), l.dtype, l.extents);
            if (!bytes)
                return bytes.error();
            distributions[l.name] = "file";
            if (auto r = b->upload(bytes->data(), m_stream); !r)
                return r.error();
        } else {
            const auto& dists = l.spec->distributions;
            const Distribution& dist = dists[static_cast<size_t>(trial) % dists.size()];
            distributions[l.name] = std::string(distributionKindName(dist.kind));
            if (l.elements > 0) {
                RawTensor raw{reinterpret_cast<void*>(b->ptr()), l.dtype, l.extents, true};
                if (auto r = TorchBridge::fillInput(raw, dist, deriveSeed(seed, kInputSalt + i)); !r)
                    return r.error();
            }
        }
        TorchBridge::synchronize();
        pristine.emplace_back(l.bytes);
        if (auto r = b->download(pristine.back().data(), m_stream); !r)
            return r.error();
    }
    return {};
}

} // namespace kf::device
