#pragma once
// Internal to engine/registry: the promotion gates by family, in the order evaluateGates
// (Gates.cpp) runs them (docs/registry.md, "Gates"): the evidence itself (EvidenceGates.cpp),
// what it shows about correctness (CorrectnessGates.cpp) and about speed (SpeedGates.cpp).

#include "engine/registry/Gates.h"

#include <string>
#include <vector>

namespace kf::gates {

using protocol::BenchReport;
using protocol::VerifyReport;

std::string fixed(double v, int digits = 2);

/// A gate not passed yet: its key and title, no detail.
GateCheck gate(const char* key, const char* title);

/// The speedup a shape's medians give (baseline ÷ candidate), or NaN when they are not there.
double derivedSpeedup(const protocol::BenchShape& s);

template <class Shape>
const Shape* findShape(const std::vector<Shape>& shapes, const ShapeBinding& b, const char* set)
{
    for (const Shape& s : shapes)
        if (s.id.set == set && s.id.sameDims(b.values))
            return &s;
    return nullptr;
}

// Evidence (EvidenceGates.cpp).
/// Both reports exist, belong to these exact files and task, agree with themselves, on one GPU.
GateCheck evidenceGate(const GateInput& in, const VerifyReport* c, const BenchReport* p);
/// The runner signed both reports and nobody changed them since (or unsigned ones are allowed).
GateCheck signedGate(const GateInput& in, GateVerdict& v);

// Correctness (CorrectnessGates.cpp).
GateCheck correctnessGate(const Task& task, const VerifyReport& c);
/// Records what the tools ran on in v.sanitizer.
GateCheck sanitizerGate(const VerifyReport& c, SanitizerPolicy policy, GateVerdict& v);
GateCheck heldOutGate(const VerifyReport& c, int heldOutRequired);
GateCheck negativeControlGate(const VerifyReport& c);

// Speed (SpeedGates.cpp): measured on every benchmark shape, never slower on one, the geometric
// mean at the threshold, and the torch.compile factor when the registry asks for it. Sets the
// verdict's speedups.
void speedGates(const GateInput& in, const BenchReport& p, GateVerdict& v);

} // namespace kf::gates
