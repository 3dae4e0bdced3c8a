// A TorchScript reference read as an op tape (engine/cast/ScriptTape.h): the modules
// tests/data/scripttape/make_fixtures.py saves with torch.jit.save, read from their archives,
// and code/__torch__.py text given directly for every mapped form, every refusal and malformed
// or hostile input (a clear Error, never a crash).
#include "testutil.h"

#include "engine/cast/ScriptTape.h"
#include "engine/task/Task.h"

#include <QtTest>

using namespace kf;
using nlohmann::json;

namespace {

const std::string kHint = "trace the module with torch.jit.trace, or write the reference as an op tape in task.json";

std::vector<std::string> names(const QStringList& l)
{
    std::vector<std::string> out;
    for (const QString& s : l)
        out.push_back(s.toStdString());
    return out;
}

Task scriptTask(const QStringList& inputs, const QStringList& outputs, const QString& file = {},
                const QStringList& scriptInputs = {})
{
    Task t;
    t.name = "scripttape";
    for (const std::string& n : names(inputs))
        t.inputs.push_back(TensorSpec{n});
    for (const std::string& n : names(outputs))
        t.outputs.push_back(TensorSpec{n});
    t.reference.kind = Reference::Kind::TorchScript;
    t.reference.torchscript = file.toStdString();
    t.reference.scriptInputs = names(scriptInputs);
    t.directory = std::string(KF_TEST_DATA_DIR) + "/scripttape";
    return t;
}

/// [[op, inputs, attrs, output], ...]: what the rows below write.
json tapeJson(const std::vector<OpStep>& steps)
{
    json out = json::array();
    for (const OpStep& s : steps)
        out.push_back({s.op, s.inputs, s.attrs, s.output});
    return out;
}

/// code/__torch__.py as TorchScript prints a module whose forward takes `params` (each a Tensor
/// unless it says otherwise) and runs `body` (lines, indented for the method).
std::string moduleCode(const QString& params, const QString& body)
{
    std::string code = "class M(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n"
                       "  def forward(self: __torch__.M";
    for (const QString& p : params.split(',', Qt::SkipEmptyParts))
        code += ",\n    " + (p.contains(':') ? p.trimmed().toStdString() : p.trimmed().toStdString() + ": Tensor");
    code += ") -> Tensor:\n";
    for (const QString& line : body.split('\n'))
        code += "    " + line.toStdString() + "\n";
    return code;
}

void compareTape(const Result<std::vector<OpStep>>& got, const QString& expected)
{
    KF_VERIFY_OK(got);
    const json want = json::parse(expected.toStdString());
    const json have = tapeJson(got.value());
    QVERIFY2(have == want, ("got " + have.dump() + "\nwant " + want.dump()).c_str());
}

} // namespace

class TestScriptTape : public QObject {
    Q_OBJECT
private slots:
    void readsFixtures_data();
    void readsFixtures();
    void refusesFixtures_data();
    void refusesFixtures();
    void mapsSource_data();
    void mapsSource();
    void refusesSource_data();
    void refusesSource();
    void sourceErrorsNameOriginAndHint();
};

void TestScriptTape::readsFixtures_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("inputs");
    QTest::addColumn<QStringList>("outputs");
    QTest::addColumn<QStringList>("scriptInputs");
    QTest::addColumn<QString>("tape");
    QTest::newRow("traced bias + exact gelu") << "bias_gelu.pt" << QStringList{"x", "b"} << QStringList{"y"} << QStringList{}
        << R"([["add",["x","b"],{},"t1"],["gelu",["t1"],{"approximate":"none"},"y"]])";
    QTest::newRow("script inputs bind forward's parameters") << "bias_gelu.pt" << QStringList{"b", "x"} << QStringList{"y"}
        << QStringList{"x", "b"} << R"([["add",["x","b"],{},"t1"],["gelu",["t1"],{"approximate":"none"},"y"]])";
    QTest::newRow("fresh names skip task names") << "bias_gelu.pt" << QStringList{"t1", "b"} << QStringList{"t2"}
        << QStringList{} << R"([["add",["t1","b"],{},"t3"],["gelu",["t3"],{"approximate":"none"},"t2"]])";
    QTest::newRow("traced add + rms_norm, both returned") << "add_rms_norm.pt" << QStringList{"x", "r", "w"}
        << QStringList{"h", "y"} << QStringList{}
        << R"([["add",["x","r"],{},"h"],["rms_norm",["h","w"],{"eps":1e-6,"normalized_dims":1},"y"]])";
    QTest::newRow("scripted scale + softmax") << "scale_softmax.pt" << QStringList{"x"} << QStringList{"y"} << QStringList{}
        << R"([["mul",["x"],{"scalar":0.125},"t1"],["softmax",["t1"],{"dim":-1},"y"]])";
    QTest::newRow("traced layer_norm with weight and bias") << "layer_norm.pt" << QStringList{"x", "w", "b"}
        << QStringList{"y"} << QStringList{}
        << R"([["layer_norm",["x","w","b"],{"eps":1e-6,"normalized_dims":1},"y"]])";
    QTest::newRow("x * sigmoid(x) to bfloat16") << "silu_bf16.pt" << QStringList{"x"} << QStringList{"y"} << QStringList{}
        << R"([["sigmoid",["x"],{},"t1"],["mul",["x","t1"],{},"t2"],["to",["t2"],{"dtype":"bf16"},"y"]])";
    QTest::newRow("sum over -1 keepdim") << "sum_keepdim.pt" << QStringList{"x"} << QStringList{"s"} << QStringList{}
        << R"([["sum",["x"],{"dim":-1,"keepdim":true},"s"]])";
    QTest::newRow("cumsum maps (the generator decides)") << "cumsum.pt" << QStringList{"x"} << QStringList{"y"}
        << QStringList{} << R"([["cumsum",["x"],{"dim":-1},"y"]])";
    QTest::newRow("matmul maps") << "matmul.pt" << QStringList{"a", "b"} << QStringList{"c"} << QStringList{}
        << R"([["matmul",["a","b"],{},"c"]])";
    QTest::newRow("a renamed class in code/__torch__/___torch_mangle_N.py") << "mangled.pt" << QStringList{"x"}
        << QStringList{"y"} << QStringList{} << R"([["relu",["x"],{},"y"]])";
    QTest::newRow("tst_torchbridge's reference: a tuple built, then returned") << "../torchbridge_ref.pt"
        << QStringList{"x", "w"} << QStringList{"y", "s"} << QStringList{}
        << R"([["mul",["x","w"],{},"t1"],["add",["t1"],{"scalar":1.0},"y"],["sum",["x"],{"dim":-1},"s"]])";
}

void TestScriptTape::readsFixtures()
{
    QFETCH(QString, file);
    QFETCH(QStringList, inputs);
    QFETCH(QStringList, outputs);
    QFETCH(QStringList, scriptInputs);
    QFETCH(QString, tape);
    compareTape(cast::scriptTape(scriptTask(inputs, outputs, file, scriptInputs)), tape);
}

void TestScriptTape::refusesFixtures_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("inputs");
    QTest::addColumn<QStringList>("outputs");
    QTest::addColumn<QString>("message");   // after "<data>/scripttape/"
    const QString hint = " (" + qs(kHint) + ")";
    const QString save = " (save the reference with torch.jit.save(torch.jit.trace(module, inputs), path))";
    QTest::newRow("scripted F.softmax") << "scripted_functional.pt" << QStringList{"x"} << QStringList{"y"}
        << "scripted_functional.pt: at code/__torch__.py:8: forward calls __torch__.torch.nn.functional.softmax, a "
           "torch.nn.functional helper compiled into the module; only ATen calls (torch.<op>) are read" + hint;
    QTest::newRow("self.weight") << "self_weight.pt" << QStringList{"x"} << QStringList{"y"}
        << "self_weight.pt: at code/__torch__.py:9: forward reads self.weight, a parameter, buffer or submodule of the "
           "module; a reference takes every tensor as an input (pass each parameter and buffer to forward as an "
           "input, or write the reference as an op tape in task.json)";
    QTest::newRow("if") << "control_if.pt" << QStringList{"x"} << QStringList{"y"}
        << "control_if.pt: at code/__torch__.py:8: forward has control flow (if); only straight-line code is read" + hint;
    QTest::newRow("too few task inputs") << "bias_gelu.pt" << QStringList{"x"} << QStringList{"y"}
        << "bias_gelu.pt: at code/__torch__.py:6: forward takes 2 input(s) after self (x, b) but the task passes 1 (x) "
           "(list forward's inputs in order in the reference's \"inputs\" in task.json)";
    QTest::newRow("more returns than task outputs") << "add_rms_norm.pt" << QStringList{"x", "r", "w"} << QStringList{"y"}
        << "add_rms_norm.pt: at code/__torch__.py:12: forward returns 2 value(s) but the task declares 1 output(s) (y) "
           "(declare one task output per value forward returns, in order)";
    QTest::newRow("torch.save, not torch.jit.save") << "state_dict.pt" << QStringList{"x"} << QStringList{"y"}
        << "state_dict.pt: at code/__torch__.py: the archive holds no code/__torch__.py, so it is not a module saved with "
           "torch.jit.save" + save;
    QTest::newRow("not a zip") << "make_fixtures.py" << QStringList{"x"} << QStringList{"y"}
        << "make_fixtures.py: it is not a readable zip archive: Not a zip archive" + save;
}

void TestScriptTape::refusesFixtures()
{
    QFETCH(QString, file);
    QFETCH(QStringList, inputs);
    QFETCH(QStringList, outputs);
    QFETCH(QString, message);
    auto r = cast::scriptTape(scriptTask(inputs, outputs, file));
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().what), QString("read the TorchScript reference"));
    QCOMPARE(qs(r.error().message()), QString(KF_TEST_DATA_DIR) + "/scripttape/" + message);
}

void TestScriptTape::mapsSource_data()
{
    QTest::addColumn<QString>("params");
    QTest::addColumn<QString>("body");
    QTest::addColumn<QStringList>("outputs");
    QTest::addColumn<QString>("tape");
    const QStringList y{"y"};
    QTest::newRow("add alpha=1") << "x, w" << "return torch.add(x, w, alpha=1)" << y << R"([["add",["x","w"],{},"y"]])";
    QTest::newRow("sub integer scalar stays integer") << "x" << "return torch.sub(x, 1, 1)" << y
        << R"([["sub",["x"],{"scalar":1},"y"]])";
    QTest::newRow("div rounding_mode=None") << "x, w" << "return torch.div(x, w, rounding_mode=None)" << y
        << R"([["div",["x","w"],{},"y"]])";
    QTest::newRow("mul negative literal") << "x" << "return torch.mul(x, -2.5)" << y << R"([["mul",["x"],{"scalar":-2.5},"y"]])";
    QTest::newRow("unary chain, ops.aten form") << "x"
        << "_0 = torch.rsqrt(torch.sqrt(torch.log(torch.exp(torch.abs(torch.neg(x))))))\n"
           "return ops.aten.silu(torch.relu(torch.sigmoid(torch.tanh(_0))))" << y
        << R"([["neg",["x"],{},"t1"],["abs",["t1"],{},"t2"],["exp",["t2"],{},"t3"],["log",["t3"],{},"t4"],)"
           R"(["sqrt",["t4"],{},"t5"],["rsqrt",["t5"],{},"t6"],["tanh",["t6"],{},"t7"],["sigmoid",["t7"],{},"t8"],)"
           R"(["relu",["t8"],{},"t9"],["silu",["t9"],{},"y"]])";
    QTest::newRow("gelu tanh") << "x" << "return torch.gelu(x, approximate=\"tanh\")" << y
        << R"([["gelu",["x"],{"approximate":"tanh"},"y"]])";
    QTest::newRow("log_softmax, dtype None, keyword dim") << "x" << "return (torch.log_softmax(x, -1, None), torch.softmax(x, dim=1))"
        << QStringList{"y", "z"} << R"([["log_softmax",["x"],{"dim":-1},"y"],["softmax",["x"],{"dim":1},"z"]])";
    QTest::newRow("layer_norm over two dims, weight only") << "x, w" << "return torch.layer_norm(x, [4, 8], w, None, 1.0000000000000001e-05, True)"
        << y << R"([["layer_norm",["x","w"],{"eps":1e-5,"normalized_dims":2},"y"]])";
    QTest::newRow("layer_norm, rms_norm without weight or eps") << "x"
        << "return (torch.layer_norm(x, [8]), torch.rms_norm(x, [8], None, None))" << QStringList{"y", "z"}
        << R"([["layer_norm",["x"],{"normalized_dims":1},"y"],["rms_norm",["x"],{"normalized_dims":1},"z"]])";
    QTest::newRow("reductions over all dims") << "x"
        << "a = annotate(List[int], [])\nreturn (torch.sum(x), torch.mean(x, None), torch.amax(x, a), torch.sum(x, dtype=None))"
        << QStringList{"s", "m", "a", "b"}
        << R"([["sum",["x"],{},"s"],["mean",["x"],{},"m"],["amax",["x"],{},"a"],["sum",["x"],{},"b"]])";
    QTest::newRow("reductions over one dim") << "x" << "return (torch.mean(x, [-1], False, dtype=None), torch.amax(x, [1], True))"
        << QStringList{"m", "a"} << R"([["mean",["x"],{"dim":-1},"m"],["amax",["x"],{"dim":1,"keepdim":true},"a"]])";
    QTest::newRow("to: ScalarType codes") << "x"
        << "return (torch.to(x, 5), torch.to(x, 6, False, True), torch.to(x, dtype=7), torch.to(x, 15, memory_format=None))"
        << QStringList{"a", "b", "c", "d"}
        << R"([["to",["x"],{"dtype":"fp16"},"a"],["to",["x"],{"dtype":"fp32"},"b"],["to",["x"],{"dtype":"fp64"},"c"],)"
           R"(["to",["x"],{"dtype":"bf16"},"d"]])";
    QTest::newRow("clone, transpose, permute, bmm") << "x, w"
        << "return (torch.clone(x, memory_format=0), torch.transpose(x, -1, -2), torch.permute(x, [1, 0]), torch.bmm(x, w))"
        << QStringList{"a", "b", "c", "d"}
        << R"([["clone",["x"],{},"a"],["transpose",["x"],{"dim0":-1,"dim1":-2},"b"],["permute",["x"],{"dims":[1,0]},"c"],)"
           R"(["bmm",["x","w"],{},"d"]])";
    QTest::newRow("annotated assignment, tuple unpacking, comments") << "x"
        << "a : Tensor = torch.exp(x)  # the exponent\n\n# a comment line\nb, c, = (torch.log(a), torch.sqrt(a))\nreturn (b, c)"
        << QStringList{"y", "z"} << R"([["exp",["x"],{},"t1"],["log",["t1"],{},"y"],["sqrt",["t1"],{},"z"]])";
    QTest::newRow("an input returned twice is copied") << "x" << "return (x, x)" << QStringList{"y", "z"}
        << R"([["clone",["x"],{},"y"],["clone",["x"],{},"z"]])";
    QTest::newRow("a value returned twice is copied") << "x" << "_0 = torch.relu(x)\nreturn (_0, _0)" << QStringList{"y", "z"}
        << R"([["relu",["x"],{},"y"],["clone",["y"],{},"z"]])";
    QTest::newRow("a call over lines, trailing commas") << "x, w" << "_0 = torch.add(\n      x,\n      w,\n    )\nreturn _0"
        << y << R"([["add",["x","w"],{},"y"]])";
}

void TestScriptTape::mapsSource()
{
    QFETCH(QString, params);
    QFETCH(QString, body);
    QFETCH(QStringList, outputs);
    QFETCH(QString, tape);
    QStringList inputs;
    for (const QString& p : params.split(',', Qt::SkipEmptyParts))
        inputs << p.trimmed().section(':', 0, 0);
    compareTape(cast::scriptTapeFromSource(moduleCode(params, body), scriptTask(inputs, outputs), "ref.py"), tape);
}

void TestScriptTape::refusesSource_data()
{
    QTest::addColumn<QString>("code");     // a whole file; "@body" puts it in moduleCode("x, w", body)
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("why");
    auto body = [](const QString& b) { return "@" + b; };
    // moduleCode's header takes 7 lines: the body starts on line 8.
    QTest::newRow("op without a catalog op") << body("return torch.cumprod(x, 1)") << "code/__torch__.py:8"
        << "forward calls torch.cumprod, which maps to no op of KernelForge's reference catalog";
    QTest::newRow("alpha") << body("return torch.add(x, w, alpha=2)") << "code/__torch__.py:8"
        << "torch.add has alpha=2; the catalog's add has no alpha (only 1)";
    QTest::newRow("rounding_mode") << body("return torch.div(x, w, rounding_mode=\"floor\")") << "code/__torch__.py:8"
        << "torch.div has rounding_mode=\"floor\"; the catalog's div is true division";
    QTest::newRow("a number first") << body("return torch.add(2, x)") << "code/__torch__.py:8"
        << "torch.add has the integer 2 as its first operand; the catalog's add takes a tensor first";
    QTest::newRow("softmax with a dtype") << body("return torch.softmax(x, -1, 6)") << "code/__torch__.py:8"
        << "torch.softmax has dtype=6; a softmax that converts the dtype has no catalog op";
    QTest::newRow("sum over two dims") << body("return torch.sum(x, [0, 1])") << "code/__torch__.py:8"
        << "torch.sum reduces over the dims [0, 1]; the catalog's sum reduces over one dim or all";
    QTest::newRow("mean with a dtype") << body("return torch.mean(x, [-1], False, dtype=6)") << "code/__torch__.py:8"
        << "torch.mean has dtype=6; a mean that converts the dtype has no catalog op";
    QTest::newRow("to a device") << body("return torch.to(x, torch.device(\"cpu\"))") << "code/__torch__.py:8"
        << "forward calls torch.device, which maps to no op of KernelForge's reference catalog";
    QTest::newRow("to with layout") << body("return torch.to(x, dtype=6, layout=0)") << "code/__torch__.py:8"
        << "torch.to has the argument layout, which this reader does not know";
    QTest::newRow("to a ScalarType without a name") << body("return torch.to(x, 9)") << "code/__torch__.py:8"
        << "torch.to converts to ScalarType 9, which the task schema has no dtype for";
    QTest::newRow("too many arguments") << body("return torch.relu(x, w)") << "code/__torch__.py:8"
        << "torch.relu has 2 positional arguments; its schema takes 1";
    QTest::newRow("unbound name") << body("_0 = torch.relu(x)\nreturn torch.relu(z)") << "code/__torch__.py:9"
        << "forward uses the name z, which is not assigned before this line";
    QTest::newRow("CONSTANTS") << body("return torch.mul(x, CONSTANTS.c0)") << "code/__torch__.py:8"
        << "forward reads CONSTANTS.c0, a constant tensor baked into the module (tracing does this to Python numbers); "
           "a reference takes every tensor as an input";
    QTest::newRow("indexing") << body("_0 = (torch.size(x))[0]\nreturn x") << "code/__torch__.py:8"
        << "forward indexes a value ([...]); no catalog op does that";
    QTest::newRow("for") << body("for i in range(2):\n  x = torch.neg(x)\nreturn x") << "code/__torch__.py:8"
        << "forward has control flow (for); only straight-line code is read";
    QTest::newRow("while") << body("while True:\n  pass\nreturn x") << "code/__torch__.py:8"
        << "forward has control flow (while); only straight-line code is read";
    QTest::newRow("assert") << body("assert False\nreturn x") << "code/__torch__.py:8"
        << "forward has an unsupported statement (assert); only assignments and return are read";
    QTest::newRow("a float parameter") << "class M(Module):\n  def forward(self: __torch__.M,\n    x: Tensor,\n    w: float) -> Tensor:\n    return x\n"
        << "code/__torch__.py:4" << "forward's parameter w has the type float, not Tensor";
    QTest::newRow("returns a number") << body("return 1") << "code/__torch__.py:8" << "forward returns the integer 1, not a tensor";
    QTest::newRow("returns nothing") << body("_0 = torch.neg(x)") << "code/__torch__.py:5" << "forward has no return statement";
    QTest::newRow("no forward") << "class M(Module):\n  def other(self):\n    return 1\n" << "code/__torch__.py:1"
        << "class M has no forward method";
    QTest::newRow("no class") << "def forward(self, x):\n  return x\n" << "code/__torch__.py"
        << "the code defines no module class with a forward method";
    QTest::newRow("empty") << "" << "code/__torch__.py" << "the code defines no module class with a forward method";
    QTest::newRow("unterminated call") << body("return torch.add(x, w") << "code/__torch__.py:8"
        << "a bracket opened here is never closed with ')'";
    QTest::newRow("unterminated string") << body("return torch.gelu(x, approximate=\"tanh)") << "code/__torch__.py:8"
        << "a string is not terminated on its line";
    QTest::newRow("garbage bytes") << QString("class M(Module):\n  def forward(self, x):\n    return \x01x\n")
        << "code/__torch__.py:3" << "unexpected byte 0x01";
    QTest::newRow("operators are not read") << body("return x + w") << "code/__torch__.py:8" << "forward does not parse: unexpected '+'";
    QTest::newRow("unary minus on a tensor") << body("return torch.neg(-x)") << "code/__torch__.py:8"
        << "forward does not parse: a unary minus applies to something other than a number literal";
    QTest::newRow("positional after keyword") << body("return torch.add(x, other=w, 1)") << "code/__torch__.py:8"
        << "forward does not parse: a positional argument follows a keyword argument";
    QTest::newRow("assigning an attribute") << body("self.y = x\nreturn x") << "code/__torch__.py:8"
        << "forward does not parse: assigns to the attribute self.y";
    QTest::newRow("stray indentation") << body("_0 = x\n  _1 = x\nreturn x") << "code/__torch__.py:9"
        << "forward does not parse: the line is indented deeper than the lines before";
    QTest::newRow("a tab") << body("\treturn x") << "code/__torch__.py:8" << "a tab indents the line; TorchScript indents with spaces";
    QTest::newRow("integer out of range") << body("return torch.add(x, 99999999999999999999)") << "code/__torch__.py:8"
        << "the integer 99999999999999999999 is out of range";
    QTest::newRow("brackets 100 deep") << body("return " + QString("torch.neg(").repeated(100) + "x" + QString(")").repeated(100))
        << "code/__torch__.py:8" << "brackets nest more than 64 deep";
    QTest::newRow("unary minus 100 deep") << body("return torch.mul(x, " + QString("-").repeated(100) + "1)") << "code/__torch__.py:8"
        << "forward does not parse: an expression nests more than 64 deep";
    QTest::newRow("attribute chain 100 long") << body("return x" + QString(".a").repeated(100)) << "code/__torch__.py:8"
        << "forward does not parse: a chain of attributes, calls and indexes is longer than 64";
    QString doubling = "_0 = (x, x)\n";
    for (int i = 1; i < 80; ++i)
        doubling += QString("_%1 = (_%2, _%2)\n").arg(i).arg(i - 1);
    QTest::newRow("tuples doubling") << body(doubling + "return x") << "code/__torch__.py:19"
        << "forward builds a list or tuple larger than this reader accepts";
    QString copies = "_0 = (" + QString("x, ").repeated(1000) + ")\n";
    for (int i = 1; i <= 5000; ++i)
        copies += QString("_%1 = _0\n").arg(i);
    // 1000 + k * 1001 values copied passes 4 Mi at the 4190th copy.
    QTest::newRow("copying a large tuple") << body(copies + "return x") << "code/__torch__.py:4198"
        << "forward copies more values than this reader accepts";
}

void TestScriptTape::refusesSource()
{
    QFETCH(QString, code);
    QFETCH(QString, pointer);
    QFETCH(QString, why);
    const std::string text = code.startsWith('@') ? moduleCode("x, w", code.mid(1)) : code.toStdString();
    auto r = cast::scriptTapeFromSource(text, scriptTask({"x", "w"}, {"y"}), "ref.py");
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().why), why);
    QCOMPARE(qs(r.error().pointer), pointer);
    QCOMPARE(qs(r.error().file), QString("ref.py"));
}

void TestScriptTape::sourceErrorsNameOriginAndHint()
{
    auto r = cast::scriptTapeFromSource(moduleCode("x, w", "return torch.gelu(x, approximate=\"erf\")"),
                                        scriptTask({"x", "w"}, {"y"}), "ref.py");
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().message()),
             qs("ref.py: at code/__torch__.py:8: torch.gelu has approximate=\"erf\"; the catalog's gelu takes \"none\" or "
                "\"tanh\" (" + kHint + ")"));
    // A string that is not UTF-8 is shown with U+FFFD (fuzz_scripttape found the throw).
    std::string code = moduleCode("x, w", "return torch.gelu(x, approximate=\"t?\")");
    code[code.find("t?") + 1] = '\xff';
    r = cast::scriptTapeFromSource(code, scriptTask({"x", "w"}, {"y"}), "ref.py");
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().why), qs("torch.gelu has approximate=\"t\xef\xbf\xbd\"; the catalog's gelu takes \"none\" or \"tanh\""));
    r = cast::scriptTapeFromSource(moduleCode("x, w", "return torch.cumprod(x, 1)"), scriptTask({"x", "w"}, {"y"}), "ref.py");
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().message()),
             qs("ref.py: at code/__torch__.py:8: forward calls torch.cumprod, which maps to no op of KernelForge's "
                "reference catalog (write the reference as an op tape of catalog ops in task.json (kforge ops lists them))"));
    // Bounded input: more than 1 MiB of code is refused before it is read.
    const std::string big = moduleCode("x, w", "return x") + std::string(std::size_t(1) << 20, '#');
    auto huge = cast::scriptTapeFromSource(big, scriptTask({"x", "w"}, {"y"}), "ref.py");
    QVERIFY(!huge.ok());
    QVERIFY2(huge.error().why.find("more than the 1048576") != std::string::npos, huge.error().why.c_str());
    QCOMPARE(qs(huge.error().pointer), QString("code/__torch__.py"));
}

QTEST_GUILESS_MAIN(TestScriptTape)
#include "tst_scripttape.moc"
