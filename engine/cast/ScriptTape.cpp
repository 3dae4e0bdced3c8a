#include "engine/cast/ScriptTape.h"

#include "engine/cast/CastArchive.h"
#include "engine/cast/ScriptAten.h"
#include "engine/cast/ScriptSyntax.h"

#include <map>
#include <set>

namespace kf::cast {

namespace {

using namespace script;

constexpr const char* kWhat = "read the TorchScript reference";
constexpr const char* kHint = "trace the module with torch.jit.trace, or write the reference as an op tape in task.json";
constexpr const char* kSaveHint = "save the reference with torch.jit.save(torch.jit.trace(module, inputs), path)";
constexpr std::size_t kMaxValueWeight = 4096;
constexpr int kMaxValueDepth = 64;
/// Values copied in one evaluation (each name read copies its value): bounds the time a
/// megabyte of `_k = _j` lines over large tuples can take.
constexpr std::size_t kMaxValueCopies = std::size_t(1) << 22;

std::string joined(const std::vector<std::string>& names)
{
    std::string s;
    for (const std::string& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

/// Runs forward's body once over symbolic tensors, recording one step per op call.
class Evaluator {
public:
    Evaluator(const Task& task, const Forward& forward) : m_task(task), m_forward(forward) {}

    std::vector<OpStep> run()
    {
        bindInputs();
        const Stmt* ret = nullptr;
        for (const Stmt& s : m_forward.body) {
            if (execute(s)) {
                ret = &s;
                break;
            }
        }
        if (!ret)
            refuse(m_forward.line, "forward has no return statement");
        return name(outputsOf(*ret));
    }

private:
    [[noreturn]] void refuse(int line, std::string why, std::string hint = {}) const
    {
        throw ScriptError{line, std::move(why), std::move(hint)};
    }

    void bindInputs()
    {
        const std::vector<Param>& params = m_forward.params;
        if (params.empty())
            refuse(m_forward.line, "forward takes no self parameter");
        std::vector<std::string> names = m_task.reference.scriptInputs;
        if (names.empty())
            for (const TensorSpec& t : m_task.inputs)
                names.push_back(t.name);
        std::vector<std::string> taken;
        for (std::size_t i = 1; i < params.size(); ++i)
            taken.push_back(params[i].name);
        if (taken.size() != names.size())
            refuse(m_forward.line,
                   "forward takes " + std::to_string(taken.size()) + " input(s) after self (" + joined(taken) +
                       ") but the task passes " + std::to_string(names.size()) + " (" + joined(names) + ")",
                   "list forward's inputs in order in the reference's \"inputs\" in task.json");
        for (std::size_t i = 1; i < params.size(); ++i) {
            const Param& p = params[i];
            if (!p.annotation.empty() && p.annotation != "Tensor")
                refuse(p.line, "forward's parameter " + p.name + " has the type " + p.annotation + ", not Tensor");
            Value v{Value::Kind::Tensor};
            v.tensor = static_cast<int>(m_names.size());
            m_names.push_back(names[i - 1]);
            m_env[p.name] = v;
        }
    }

    /// True at the return statement.
    bool execute(const Stmt& s)
    {
        switch (s.kind) {
        case Stmt::Kind::Broken:
            refuse(s.line, "forward does not parse: " + s.why);
        case Stmt::Kind::Unsupported: {
            static const std::set<std::string, std::less<>> flow = {"if", "elif", "else", "for", "while",
                                                                    "with", "try", "except", "finally"};
            if (flow.count(s.keyword))
                refuse(s.line, "forward has control flow (" + s.keyword + "); only straight-line code is read");
            refuse(s.line, "forward has an unsupported statement (" + s.keyword + "); only assignments and return are read");
        }
        case Stmt::Kind::Expr:
            (void)eval(s.value);
            return false;
        case Stmt::Kind::Return:
            return true;
        case Stmt::Kind::Assign: {
            Value v = eval(s.value);
            if (s.targets.size() == 1) {
                m_env[s.targets.front()] = std::move(v);
            } else {
                if (v.kind != Value::Kind::Tuple || v.items.size() != s.targets.size())
                    refuse(s.line, "forward unpacks " + describe(v) + " into " + std::to_string(s.targets.size()) + " names");
                for (std::size_t i = 0; i < s.targets.size(); ++i)
                    m_env[s.targets[i]] = v.items[i];
            }
            return false;
        }
        }
        return false;
    }

    /// Refuses a reference to something outside forward's own values, or returns.
    void refuseOutside(int line, const std::string& dotted) const
    {
        if (dotted.rfind("self.", 0) == 0)
            refuse(line, "forward reads " + dotted + ", a parameter, buffer or submodule of the module; a reference takes every tensor as an input",
                   "pass each parameter and buffer to forward as an input, or write the reference as an op tape in task.json");
        if (dotted.rfind("CONSTANTS.", 0) == 0)
            refuse(line, "forward reads " + dotted + ", a constant tensor baked into the module (tracing does this to Python numbers); a reference takes every tensor as an input",
                   "script the module with torch.jit.script, which keeps Python numbers as literals, or pass the tensor to forward as an input");
        if (dotted.rfind("__torch__.torch.nn.functional.", 0) == 0)
            refuse(line, "forward calls " + dotted + ", a torch.nn.functional helper compiled into the module; only ATen calls (torch.<op>) are read");
        if (dotted.rfind("__torch__.", 0) == 0)
            refuse(line, "forward calls " + dotted + ", code compiled into the module; only ATen calls (torch.<op>) are read");
    }

    Value compose(const Node& n)
    {
        Value v{n.kind == Node::Kind::List ? Value::Kind::List : Value::Kind::Tuple};
        for (const Node& c : n.children) {
            v.items.push_back(eval(c));
            v.weight += v.items.back().weight;
            v.depth = std::max(v.depth, v.items.back().depth + 1);
            if (v.weight > kMaxValueWeight || v.depth > kMaxValueDepth)
                refuse(n.line, "forward builds a list or tuple larger than this reader accepts");
        }
        return v;
    }

    Value eval(const Node& n)
    {
        switch (n.kind) {
        case Node::Kind::Int: return Value{Value::Kind::Int, -1, n.integer};
        case Node::Kind::Float: return Value{Value::Kind::Float, -1, 0, n.number};
        case Node::Kind::Bool: return Value{Value::Kind::Bool, -1, 0, 0.0, n.flag};
        case Node::Kind::None: return Value{};
        case Node::Kind::Str: return Value{Value::Kind::Str, -1, 0, 0.0, false, n.text};
        case Node::Kind::List:
        case Node::Kind::Tuple: return compose(n);
        case Node::Kind::Name: {
            auto it = m_env.find(n.text);
            if (it != m_env.end()) {
                m_copies += it->second.weight;
                if (m_copies > kMaxValueCopies)
                    refuse(n.line, "forward copies more values than this reader accepts");
                return it->second;
            }
            if (n.text == "inf" || n.text == "nan")
                refuse(n.line, "forward uses the number " + n.text + ", which an op attribute cannot hold");
            refuse(n.line, "forward uses the name " + n.text + ", which is not assigned before this line");
        }
        case Node::Kind::Attr: {
            const std::string dotted = dottedName(n);
            refuseOutside(n.line, dotted);
            refuse(n.line, "forward reads the attribute " + (dotted.empty() ? "." + n.text : dotted) + ", which this reader does not know");
        }
        case Node::Kind::Subscript:
            refuse(n.line, "forward indexes a value ([...]); no catalog op does that");
        case Node::Kind::Call: return call(n);
        }
        return Value{};
    }

    Value call(const Node& n)
    {
        const std::string callee = dottedName(n.children.front());
        if (callee == "annotate" && n.children.size() == 3 && n.keywords.empty())
            return eval(n.children[2]);   // annotate(List[int], []): the value, typed
        refuseOutside(n.line, callee);
        std::string op;
        for (const char* prefix : {"torch.ops.aten.", "ops.aten.", "torch."})
            if (callee.rfind(prefix, 0) == 0) {
                op = callee.substr(std::string_view(prefix).size());
                break;
            }
        if (op.empty() || op.find('.') != std::string::npos || !knownAtenOp(op))
            refuse(n.line, "forward calls " + (callee.empty() ? std::string("an expression") : callee) +
                               ", which maps to no op of KernelForge's reference catalog",
                   "write the reference as an op tape of catalog ops in task.json (kforge ops lists them)");
        const std::size_t firstKeyword = n.children.size() - n.keywords.size();
        std::vector<Value> positional;
        for (std::size_t i = 1; i < firstKeyword; ++i)
            positional.push_back(eval(n.children[i]));
        std::vector<std::pair<std::string, Value>> keywords;
        for (std::size_t k = 0; k < n.keywords.size(); ++k)
            keywords.emplace_back(n.keywords[k], eval(n.children[firstKeyword + k]));
        Step s{mapAtenCall(callee, op, n.line, positional, keywords), static_cast<int>(m_names.size())};
        m_names.emplace_back();   // named once the returns are known
        m_steps.push_back(std::move(s));
        Value v{Value::Kind::Tensor};
        v.tensor = m_steps.back().output;
        return v;
    }

    std::vector<int> outputsOf(const Stmt& ret)
    {
        const Value v = eval(ret.value);
        std::vector<int> out;
        if (v.kind == Value::Kind::Tensor) {
            out.push_back(v.tensor);
        } else if (v.kind == Value::Kind::Tuple) {
            for (std::size_t i = 0; i < v.items.size(); ++i) {
                if (v.items[i].kind != Value::Kind::Tensor)
                    refuse(ret.line, "forward returns " + describe(v.items[i]) + " in position " + std::to_string(i) + "; every output is a tensor");
                out.push_back(v.items[i].tensor);
            }
        } else {
            refuse(ret.line, "forward returns " + describe(v) + ", not a tensor");
        }
        if (out.size() != m_task.outputs.size()) {
            std::vector<std::string> names;
            for (const TensorSpec& t : m_task.outputs)
                names.push_back(t.name);
            refuse(ret.line,
                   "forward returns " + std::to_string(out.size()) + " value(s) but the task declares " +
                       std::to_string(names.size()) + " output(s) (" + joined(names) + ")",
                   "declare one task output per value forward returns, in order");
        }
        return out;
    }

    std::vector<OpStep> name(const std::vector<int>& outputs)
    {
        const std::size_t inputs = m_names.size() - m_steps.size();
        std::vector<Step> copies;
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            const int t = outputs[i];
            const std::string& want = m_task.outputs[i].name;
            if (static_cast<std::size_t>(t) >= inputs && m_names[t].empty()) {
                m_names[t] = want;
                continue;
            }
            // An input returned as it is, or a value returned twice: a copy carries the name.
            MappedCall copy{"clone", {t}};
            copies.push_back({copy, static_cast<int>(m_names.size())});
            m_names.push_back(want);
        }
        std::set<std::string, std::less<>> used(m_task.reference.scriptInputs.begin(), m_task.reference.scriptInputs.end());
        for (const auto* list : {&m_task.inputs, &m_task.outputs})
            for (const TensorSpec& t : *list)
                used.insert(t.name);
        int fresh = 0;
        std::vector<OpStep> tape;
        for (Step& s : m_steps) {
            std::string& out = m_names[s.output];
            while (out.empty()) {
                std::string candidate = "t" + std::to_string(++fresh);
                if (!used.count(candidate))
                    out = candidate;
            }
        }
        m_steps.insert(m_steps.end(), copies.begin(), copies.end());
        for (const Step& s : m_steps) {
            OpStep step{s.call.op, {}, s.call.attrs, m_names[s.output]};
            for (int in : s.call.inputs)
                step.inputs.push_back(m_names[in]);
            tape.push_back(std::move(step));
        }
        return tape;
    }

    struct Step {
        MappedCall call;
        int output = -1;
    };

    const Task& m_task;
    const Forward& m_forward;
    std::map<std::string, Value, std::less<>> m_env;
    std::vector<std::string> m_names;   ///< by tensor number: the inputs, then one per step
    std::vector<Step> m_steps;
    std::size_t m_copies = 0;
};

Result<std::vector<OpStep>> tapeFromCode(std::string_view code, std::string_view className, const Task& task,
                                         const std::string& file, const std::string& entry)
{
    try {
        const Forward forward = parseForward(code, className);
        return Evaluator(task, forward).run();
    } catch (const ScriptError& e) {
        return Error::inFile(file, e.line > 0 ? entry + ":" + std::to_string(e.line) : entry, kWhat, e.why, e.hint.empty() ? kHint : e.hint);
    }
}

/// The saved module's class as data.pkl names it first (`\x80\x02c<module>\n<class>\n`,
/// pickle protocol 2's GLOBAL): {"__torch__.___torch_mangle_4", "Mangled"}; empty when it does not.
std::pair<std::string, std::string> rootClass(const Archive& a, const std::string& prefix)
{
    const ArchiveEntry* pkl = a.find(prefix + "data.pkl");
    if (!pkl || pkl->bytes.compare(0, 3, "\x80\x02" "c") != 0)
        return {};
    auto field = [&](std::size_t& at) {
        const std::size_t nl = pkl->bytes.find('\n', at);
        if (nl == std::string::npos || nl - at > 255)
            return std::string();
        std::string s = pkl->bytes.substr(at, nl - at);
        at = nl + 1;
        for (char c : s)
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
                return std::string();
        return s;
    };
    std::size_t at = 3;
    std::string module = field(at);
    std::string name = module.empty() ? std::string() : field(at);
    if (name.empty() || (module != "__torch__" && module.rfind("__torch__.", 0) != 0) || module.find("..") != std::string::npos)
        return {};
    return {module, name};
}

} // namespace

Result<std::vector<OpStep>> scriptTapeFromSource(std::string_view code, const Task& task, const std::string& origin)
{
    return tapeFromCode(code, {}, task, origin, "code/__torch__.py");
}

Result<ScriptCode> scriptCode(const Task& task)
{
    const std::string file = (task.directory / task.reference.torchscript).string();
    if (task.reference.torchscript.empty())
        return Error::inFile(file, {}, kWhat, "the task's reference names no TorchScript file", "set reference.torchscript in task.json");
    auto archive = readArchive(file);
    if (!archive) {
        Error e = archive.error();   // the archive reader's why, file and entry; a hint for this file
        e.what = kWhat;
        e.hint = kSaveHint;
        return e;
    }
    const Archive& a = archive.value();
    const std::string first = a.entries.empty() ? std::string() : a.entries.front().name;
    const std::string prefix = first.substr(0, first.find('/') == std::string::npos ? 0 : first.find('/') + 1);
    auto [module, className] = rootClass(a, prefix);
    if (module.empty())
        module = "__torch__";
    std::string entry = "code/" + module + ".py";
    for (std::size_t i = 5; i < entry.size() - 3; ++i)
        if (entry[i] == '.')
            entry[i] = '/';
    const ArchiveEntry* code = prefix.empty() ? nullptr : a.find(prefix + entry);
    if (!code)
        return Error::inFile(file, entry, kWhat, "the archive holds no " + entry + ", so it is not a module saved with torch.jit.save", kSaveHint);
    return ScriptCode{entry, std::string(code->bytes), className};
}

Result<std::vector<OpStep>> scriptTape(const Task& task)
{
    auto code = scriptCode(task);
    if (!code)
        return code.error();
    const std::string file = (task.directory / task.reference.torchscript).string();
    return tapeFromCode(code->text, code->className, task, file, code->entry);
}

} // namespace kf::cast
