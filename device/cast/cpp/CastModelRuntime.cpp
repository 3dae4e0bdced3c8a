// kf_cast models (include/kf_cast/kf_cast_model.h): the C++ side of generic substitution. The
// same rules as the Python runtime's graph pass (device/cast/python/kernelforge_cast/_substitute.py)
// on a frozen TorchScript graph: a package op's reference tape is the pattern; each ATen call that
// a catalog op computes is a candidate; a match agrees on the attributes, and the call site's
// tensors fit the op (dtype, rank, contiguity, fixed extents, symbol ranges, constraints). The
// tensors' types come from one run of the unchanged graph on the example inputs, every
// intermediate value made an output of a copy of the graph. Its own translation unit: it
// includes the JIT's headers.
#include "device/cast/cpp/CastOp.h"
#include "device/runner/TorchCatalog.h"
#include "engine/task/DType.h"
#include "include/kf_cast/kf_cast_model.h"

#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace kf_cast {

namespace {

using Json = nlohmann::json;
using torch::jit::Node;
using torch::jit::Value;

const detail::LoadedPackage& loadedOf(const Package& package)
{
    const auto* p = dynamic_cast<const detail::LoadedPackage*>(&package);
    if (!p || !p->m_source)
        throw std::runtime_error("kf_cast: the package must come from kf_cast::load");
    return *p;
}

const Json& modelEntry(const detail::LoadedPackage& p, const std::string& name)
{
    const Json& m = p.m_source->manifest;
    if (m.contains("models"))
        for (const Json& e : m["models"])
            if (e["name"].get<std::string>() == name)
                return e;
    throw std::runtime_error(p.m_path + ": the package has no model \"" + name + "\"");
}

const std::string& fileOf(const detail::LoadedPackage& p, const std::string& path)
{
    const auto* e = p.m_source->file(path);
    if (!e)
        throw std::runtime_error(p.m_path + ": no file " + path);
    return e->bytes;
}

// ---- reading a call site ------------------------------------------------------------------

struct Step {
    std::string op;                 ///< catalog op
    std::vector<Value*> tensors;    ///< tensor arguments, in the catalog op's order
    Json attrs = Json::object();
};

bool isTensor(Value* v) { return v->type()->cast<c10::TensorType>() != nullptr; }

std::optional<c10::IValue> constantOf(Value* v) { return torch::jit::toIValue(v); }

bool isOne(const std::optional<c10::IValue>& v)
{
    return v && ((v->isInt() && v->toInt() == 1) || (v->isDouble() && v->toDouble() == 1.0));
}

/// The catalog op a node computes, its tensor arguments and attributes; empty when none (or when
/// the call uses something the catalog op cannot express).
std::optional<Step> stepOf(Node* n)
{
    const std::string kind = n->kind().toQualString();
    if (kind.rfind("aten::", 0) != 0 || n->outputs().size() != 1)
        return std::nullopt;
    const std::string name = kind.substr(6);
    const auto in = n->inputs();
    static const std::set<std::string> binary = {"add", "sub", "mul", "div"};
    static const std::set<std::string> unary = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "silu"};
    Step s;
    if (binary.count(name)) {
        const std::size_t want = name == "add" || name == "sub" ? 3 : 2;
        if (in.size() != want || !isTensor(in[0]) || (want == 3 && !isOne(constantOf(in[2]))))
            return std::nullopt;
        s.op = name;
        if (isTensor(in[1])) {
            s.tensors = {in[0], in[1]};
        } else {
            auto c = constantOf(in[1]);
            if (!c || !(c->isInt() || c->isDouble()))
                return std::nullopt;
            s.tensors = {in[0]};
            s.attrs["scalar"] = c->isInt() ? Json(c->toInt()) : Json(c->toDouble());
        }
    } else if (unary.count(name)) {
        if (in.size() != 1 || !isTensor(in[0]))
            return std::nullopt;
        s.op = name;
        s.tensors = {in[0]};
    } else if (name == "gelu") {
        auto a = in.size() == 2 ? constantOf(in[1]) : std::nullopt;
        if (!a || !a->isString())
            return std::nullopt;
        s.op = name;
        s.tensors = {in[0]};
        s.attrs["approximate"] = a->toStringRef();
    } else if (name == "softmax" || name == "log_softmax") {
        if (in.size() != 3)
            return std::nullopt;
        auto dim = constantOf(in[1]);
        auto dtype = constantOf(in[2]);
        if (!dim || !dim->isInt() || !dtype || !dtype->isNone())
            return std::nullopt;
        s.op = name;
        s.tensors = {in[0]};
        s.attrs["dim"] = dim->toInt();
    } else if (name == "rms_norm" || name == "layer_norm") {
        const bool layer = name == "layer_norm";
        if (in.size() != (layer ? 6u : 4u))
            return std::nullopt;
        auto shape = constantOf(in[1]);
        auto eps = constantOf(in[layer ? 4 : 3]);
        if (!shape || !shape->isIntList() || !eps)
            return std::nullopt;
        s.op = name;
        s.tensors = {in[0]};
        const bool weight = isTensor(in[2]);
        const bool bias = layer && isTensor(in[3]);
        if (bias && !weight)
            return std::nullopt;
        if (weight)
            s.tensors.push_back(in[2]);
        if (bias)
            s.tensors.push_back(in[3]);
        s.attrs["eps"] = eps->isNone() ? Json() : Json(eps->toDouble());
        s.attrs["normalized_dims"] = static_cast<std::int64_t>(shape->toIntList().size());
    } else if (name == "matmul" || name == "mm" || name == "bmm") {
        if (in.size() != 2 || !isTensor(in[0]) || !isTensor(in[1]))
            return std::nullopt;
        s.op = name == "bmm" ? "bmm" : "matmul";
        s.tensors = {in[0], in[1]};
    } else {
        return std::nullopt;
    }
    return s;
}

/// Catalog defaults, so an attribute a task leaves out compares equal to the call's explicit value.
Json defaultsOf(const std::string& op)
{
    if (op == "softmax" || op == "log_softmax")
        return {{"dim", -1}};
    if (op == "gelu")
        return {{"approximate", "none"}};
    if (op == "layer_norm")
        return {{"eps", 1e-5}, {"normalized_dims", 1}};
    if (op == "rms_norm")
        return {{"eps", nullptr}, {"normalized_dims", 1}};
    return Json::object();
}

std::string attrsDisagree(const std::string& op, const Json& stepAttrs, const Json& callAttrs, std::int64_t rank)
{
    Json want = defaultsOf(op);
    if (stepAttrs.is_object())
        for (const auto& [k, v] : stepAttrs.items())
            want[k] = v;
    for (const auto& [k, v] : callAttrs.items()) {
        Json w = want.contains(k) ? want[k] : Json();
        Json got = v;
        if (k == "dim" && v.is_number_integer() && w.is_number_integer() && rank > 0) {
            got = ((v.get<std::int64_t>() % rank) + rank) % rank;
            w = ((w.get<std::int64_t>() % rank) + rank) % rank;
        }
        if (got != w)
            return k + " " + v.dump() + ", kernel " + w.dump();
    }
    return {};
}

// ---- tensor types from one run ------------------------------------------------------------

struct Meta {
    at::Tensor meta;          ///< sizes, strides and dtype on the meta device
    bool contiguous = true;
};

Meta metaOf(const at::Tensor& t)
{
    return {at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta)), t.is_contiguous()};
}

std::map<Value*, Meta> recordTypes(const std::shared_ptr<torch::jit::Graph>& graph, const c10::IValue& self,
                                   const std::vector<c10::IValue>& example)
{
    auto probe = graph->copy();
    std::vector<Value*> original, copied;
    auto on = graph->nodes().begin();
    auto cn = probe->nodes().begin();
    for (; on != graph->nodes().end() && cn != probe->nodes().end(); ++on, ++cn)
        for (std::size_t i = 0; i < on->outputs().size(); ++i)
            if (isTensor(on->outputs()[i]) && on->kind() != c10::prim::Constant) {
                original.push_back(on->outputs()[i]);
                copied.push_back(cn->outputs()[i]);
            }
    const std::size_t base = probe->outputs().size();
    for (Value* v : copied)
        probe->registerOutput(v);
    torch::jit::Code code(probe, "kf_cast_type_probe");
    torch::jit::InterpreterState state(code);
    torch::jit::Stack stack;
    stack.push_back(self);
    for (const c10::IValue& v : example)
        stack.push_back(v);
    {
        torch::NoGradGuard noGrad;
        state.run(stack);
    }
    std::map<Value*, Meta> types;
    for (std::size_t i = 0; i < original.size() && base + i < stack.size(); ++i)
        if (stack[base + i].isTensor())
            types[original[i]] = metaOf(stack[base + i].toTensor());
    for (std::size_t i = 1; i < graph->inputs().size() && i - 1 < example.size(); ++i)
        if (example[i - 1].isTensor())
            types[graph->inputs()[i]] = metaOf(example[i - 1].toTensor());
    return types;
}

// ---- matching -----------------------------------------------------------------------------

struct PackageOp {
    std::string name;
    Json json;                                   ///< its manifest entry
    std::shared_ptr<detail::CastOp> op;
};

struct Matcher {
    std::map<Value*, Meta>& types;

    const Meta* typeOf(Value* v)
    {
        if (auto it = types.find(v); it != types.end())
            return &it->second;
        if (v->node()->kind() == c10::prim::Constant)
            if (auto c = constantOf(v); c && c->isTensor())
                return &(types[v] = metaOf(c->toTensor()));
        return nullptr;
    }

    std::string matchStep(const Json& steps, std::size_t k, Node* node, std::map<std::string, Value*>& inputs,
                          std::vector<Node*>& stepNodes)
    {
        const Json& step = steps[k];
        const std::string want = step["op"].get<std::string>();
        auto got = stepOf(node);
        if (!got || got->op != want)
            return "not a " + want;
        const Json& refInputs = step["inputs"];
        if (got->tensors.size() != refInputs.size())
            return std::to_string(got->tensors.size()) + " tensor arguments, the kernel's " + want + " takes " +
                   std::to_string(refInputs.size());
        const Meta* first = typeOf(got->tensors[0]);
        if (auto why = attrsDisagree(want, step.value("attrs", Json::object()), got->attrs, first ? first->meta.dim() : 0);
            !why.empty())
            return why;
        std::map<std::string, std::size_t> produced;
        for (std::size_t j = 0; j < k; ++j)
            produced[steps[j]["output"].get<std::string>()] = j;
        for (std::size_t i = 0; i < refInputs.size(); ++i) {
            Value* arg = got->tensors[i];
            const std::string ref = refInputs[i].get<std::string>();
            if (auto it = produced.find(ref); it != produced.end()) {
                Node* producer = arg->node();
                if (!stepNodes[it->second]) {
                    stepNodes[it->second] = producer;
                    if (auto why = matchStep(steps, it->second, producer, inputs, stepNodes); !why.empty())
                        return why;
                } else if (stepNodes[it->second] != producer) {
                    return "the pattern's steps are connected differently";
                }
            } else {
                if (auto in = inputs.find(ref); in != inputs.end() && in->second != arg)
                    return "input " + ref + " would be two different values";
                inputs[ref] = arg;
            }
        }
        return {};
    }

    std::string fits(const PackageOp& op, const std::map<std::string, Value*>& inputs)
    {
        std::vector<at::Tensor> metas;
        for (const Json& t : op.json["inputs"]) {
            const std::string name = t["name"].get<std::string>();
            auto it = inputs.find(name);
            const Meta* m = it == inputs.end() ? nullptr : typeOf(it->second);
            if (!m)
                return "no type information for " + name;
            if (!m->contiguous)
                return name + " is not contiguous";
            metas.push_back(m->meta);
        }
        return op.op->refusal(metas);
    }
};

// The package's ops whose reference is a tape, longer tapes first, so a fused add -> rms_norm
// wins over a plain add of the same nodes.
std::vector<PackageOp> tapeOps(const detail::LoadedPackage& p)
{
    std::vector<PackageOp> ops;
    for (std::size_t i = 0; i < p.m_source->ops.size(); ++i)
        if (p.m_source->ops[i].json["reference"]["kind"] == "tape")
            ops.push_back({p.m_source->ops[i].name, p.m_source->ops[i].json, p.m_ops[i]});
    std::stable_sort(ops.begin(), ops.end(), [](const PackageOp& a, const PackageOp& b) {
        return a.json["reference"]["steps"].size() > b.json["reference"]["steps"].size();
    });
    return ops;
}

// A pattern laid over the graph from one candidate: the node of each step (the candidate is the
// last step), the value of each of the op's inputs, and the step that runs last.
struct Match {
    const Json& steps;
    const std::vector<std::string>& outputNames;
    std::map<std::string, Value*> inputs;
    std::vector<Node*> stepNodes;
    Node* last = nullptr;

    bool returns(std::size_t k) const
    {
        const std::string out = steps[k]["output"].get<std::string>();
        return std::find(outputNames.begin(), outputNames.end(), out) != outputNames.end();
    }
    bool inPattern(Node* n) const { return std::find(stepNodes.begin(), stepNodes.end(), n) != stepNodes.end(); }

    // A step's result the op does not return must be used only inside the pattern.
    std::string hiddenResultEscapes() const
    {
        for (std::size_t k = 0; k < steps.size(); ++k) {
            if (returns(k))
                continue;
            for (const torch::jit::Use& u : stepNodes[k]->output()->uses())
                if (!inPattern(u.user))
                    return steps[k]["op"].get<std::string>() + "'s result is used elsewhere and the kernel does not return it";
        }
        return {};
    }
    // The op runs where the pattern ends: a result it returns may not be used earlier.
    std::string resultUsedEarly()
    {
        last = *std::max_element(stepNodes.begin(), stepNodes.end(), [](Node* a, Node* b) { return b->isAfter(a); });
        for (std::size_t k = 0; k < steps.size(); ++k) {
            if (!returns(k))
                continue;
            for (const torch::jit::Use& u : stepNodes[k]->output()->uses())
                if (!inPattern(u.user) && !u.user->isAfter(last))
                    return steps[k]["op"].get<std::string>() + "'s result is used before the pattern ends";
        }
        return {};
    }
};

// One substitution pass over a frozen forward graph: the candidates (ATen calls a catalog op
// computes), the ones a package op has taken, and why the others were refused.
class Substitution {
public:
    Substitution(std::shared_ptr<torch::jit::Graph> graph, std::map<Value*, Meta> types)
        : graph_(std::move(graph)), types_(std::move(types))
    {
        for (Node* n : graph_->nodes())
            if (auto s = stepOf(n)) {
                candidates_.push_back(n);
                catalogOf_[n] = s->op;
            }
    }

    // Every place `op`'s pattern matches and fits, each call site's steps replaced by one call.
    void apply(const PackageOp& op, std::vector<Site>& report)
    {
        const Json& steps = op.json["reference"]["steps"];
        std::vector<std::string> outputNames;
        for (const Json& o : op.json["outputs"])
            outputNames.push_back(o["name"].get<std::string>());
        for (Node* node : candidates_) {
            if (claimed_.count(node))
                continue;
            Match m{steps, outputNames, {}, std::vector<Node*>(steps.size(), nullptr)};
            m.stepNodes.back() = node;
            if (const std::string why = refusal(op, m); !why.empty()) {
                if (catalogOf_[node] == steps.back()["op"].get<std::string>())
                    reasons_[node].push_back("cast::" + op.name + ": " + why);
                continue;
            }
            replace(op, m, report);
        }
    }

    // The candidates no op took, with every op's reason.
    void reportKept(std::vector<Site>& report)
    {
        for (Node* node : candidates_) {
            if (claimed_.count(node))
                continue;
            std::string why;
            for (const std::string& r : reasons_[node])
                why += (why.empty() ? "" : "; ") + r;
            report.push_back({node->output()->debugName(), catalogOf_[node], "kept", "",
                              why.empty() ? "no packaged kernel implements " + catalogOf_[node] : why});
        }
    }

private:
    // Why `op` cannot replace the pattern ending at m's last step; empty when it can.
    std::string refusal(const PackageOp& op, Match& m)
    {
        const std::vector<Node*>& nodes = m.stepNodes;
        std::string why = matcher_.matchStep(m.steps, m.steps.size() - 1, nodes.back(), m.inputs, m.stepNodes);
        if (why.empty() && std::any_of(nodes.begin(), nodes.end(), [&](Node* s) { return !s || claimed_.count(s); }))
            why = "part of another substitution";
        if (why.empty() && std::set<Node*>(nodes.begin(), nodes.end()).size() != nodes.size())
            why = "two steps of the pattern would be one call";
        if (why.empty())
            why = m.hiddenResultEscapes();
        if (why.empty())
            why = m.resultUsedEarly();
        if (why.empty())
            why = matcher_.fits(op, m.inputs);
        return why;
    }

    // One call of `op` where the pattern ends, its results in place of the steps' results; the
    // steps left without uses are removed.
    void replace(const PackageOp& op, const Match& m, std::vector<Site>& report)
    {
        std::vector<Value*> args;
        for (const Json& t : op.json["inputs"])
            args.push_back(m.inputs.at(t["name"].get<std::string>()));
        Node* call = graph_->create(c10::Symbol::fromQualString("cast::" + op.name), args, m.outputNames.size());
        call->insertBefore(m.last);
        for (std::size_t k = 0; k < m.steps.size(); ++k) {
            const std::string out = m.steps[k]["output"].get<std::string>();
            auto at = std::find(m.outputNames.begin(), m.outputNames.end(), out);
            if (at == m.outputNames.end())
                continue;
            Value* produced = call->output(static_cast<std::size_t>(at - m.outputNames.begin()));
            Value* replaced = m.stepNodes[k]->output();
            produced->setType(replaced->type());
            if (auto t = types_.find(replaced); t != types_.end())
                types_[produced] = t->second;   // a later pattern may start from this value
            replaced->replaceAllUsesWith(produced);
        }
        for (Node* s : m.stepNodes)
            claimed_.insert(s);
        for (Node* s : m.stepNodes)
            report.push_back({s->output()->debugName(), catalogOf_[s], "substituted", op.name, ""});
        std::vector<Node*> order = m.stepNodes;
        std::sort(order.begin(), order.end(), [](Node* a, Node* b) { return a->isAfter(b); });
        for (Node* s : order)
            if (!s->output()->hasUses()) {
                types_.erase(s->output());   // no stale type under an address a new value may reuse
                s->destroy();
            }
    }

    std::shared_ptr<torch::jit::Graph> graph_;
    std::map<Value*, Meta> types_;
    Matcher matcher_{types_};
    std::vector<Node*> candidates_;
    std::map<Node*, std::string> catalogOf_;
    std::set<Node*> claimed_;
    std::map<Node*, std::vector<std::string>> reasons_;
};

} // namespace

std::vector<std::pair<std::string, std::string>> models(const Package& package)
{
    const auto& p = loadedOf(package);
    std::vector<std::pair<std::string, std::string>> out;
    for (const kf::cast::PackageModel& m : p.m_source->models)
        out.emplace_back(m.name, m.format);
    return out;
}

torch::jit::Module loadModel(const Package& package, const std::string& name, const c10::Device& device)
{
    const auto& p = loadedOf(package);
    const Json& e = modelEntry(p, name);
    if (e["format"].get<std::string>() != "torchscript")
        throw std::runtime_error(p.m_path + ": model " + name + " is a torch.export program; the Python runtime runs it "
                                 "(python -m kernelforge_cast run)");
    std::istringstream in(fileOf(p, e["file"].get<std::string>()));
    try {
        torch::jit::Module m = torch::jit::load(in, device);
        m.eval();
        return m;
    } catch (const c10::Error& err) {
        throw std::runtime_error(p.m_path + ": model " + name + " does not load: " + err.what_without_backtrace());
    }
}

std::vector<c10::IValue> modelInputs(const Package& package, const std::string& name, const c10::Device& device,
                                     std::uint64_t seed)
{
    const auto& p = loadedOf(package);
    const Json& e = modelEntry(p, name);
    const std::string kind = e["example"]["kind"].get<std::string>();
    std::vector<c10::IValue> out;
    if (kind == "shapes") {
        const Json spec = Json::parse(fileOf(p, e["example"]["file"].get<std::string>()));
        at::Generator gen = at::detail::createCPUGenerator(seed);
        for (const Json& t : spec["inputs"]) {
            auto type = kf::parseDType(t["dtype"].get<std::string>());
            const at::ScalarType st = kf::device::scalarTypeOf(*type);
            const std::vector<std::int64_t> shape = t["shape"].get<std::vector<std::int64_t>>();
            const std::string dist = t.value("distribution", "normal");
            const double lo = t.value("low", 0.0), hi = t.value("high", 1.0);
            const auto f64 = at::TensorOptions().dtype(at::kDouble);
            at::Tensor x;
            if (dist == "randint")
                x = at::randint(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi), shape, gen,
                                at::TensorOptions().dtype(at::kLong));
            else if (dist == "ones")
                x = at::ones(shape, f64);
            else if (dist == "zeros")
                x = at::zeros(shape, f64);
            else if (dist == "uniform")
                x = at::rand(shape, gen, f64) * (hi - lo) + lo;
            else
                x = at::randn(shape, gen, f64);
            out.emplace_back(x.to(st).to(device));
        }
        return out;
    }
    if (kind == "tensors") {
        const std::string& bytes = fileOf(p, e["example"]["file"].get<std::string>());
        c10::IValue v = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
        auto add = [&](const c10::IValue& x) {
            if (!x.isTensor())
                throw std::runtime_error(p.m_path + ": the saved inputs of model " + name + " hold something other than tensors");
            out.emplace_back(x.toTensor().to(device));
        };
        if (v.isTuple())
            for (const auto& x : v.toTupleRef().elements())
                add(x);
        else if (v.isList())
            for (const auto& x : v.toListRef())
                add(x);
        else
            add(v);
        return out;
    }
    throw std::runtime_error(p.m_path + ": model " + name + " takes the program's own sample inputs, which only "
                             "torch.export programs carry");
}

Substituted substitute(const Package& package, const torch::jit::Module& module, const std::vector<c10::IValue>& example)
{
    const auto& p = loadedOf(package);
    torch::jit::Module copy = module.clone();
    copy.eval();
    Substituted result{torch::jit::freeze_module(copy), {}};
    auto graph = result.module.get_method("forward").graph();
    Substitution pass(graph, recordTypes(graph, result.module._ivalue(), example));
    for (const PackageOp& op : tapeOps(p))
        pass.apply(op, result.report);
    pass.reportKept(result.report);
    torch::jit::EliminateDeadCode(graph);
    graph->lint();
    return result;
}

} // namespace kf_cast
