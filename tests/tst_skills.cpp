// Skills (engine/agent/Skills.h), the YAML they are written in (engine/agent/Yaml.h) and the
// planner that picks them for a task (engine/agent/SkillPlanner.h): the built-in library is
// valid, every malformed front matter gets an error naming file:line:col and the key, --skills-dir
// folders override by name in order, and the choice for the examples is the one documented in
// docs/agents.md.
#include "testutil.h"

#include "engine/agent/SkillPlanner.h"
#include "engine/agent/Skills.h"
#include "engine/agent/Yaml.h"
#include "engine/cast/ReferenceSteps.h"
#include "engine/core/Files.h"
#include "engine/task/Task.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <filesystem>

using namespace kf;
using namespace kf::agent;
namespace fs = std::filesystem;

namespace {

std::string skillText(const std::string& name, const std::string& extra = {}, const std::string& body = "# Body\n\nText.\n")
{
    return "---\nname: " + name + "\ndescription: A test skill.\n" + extra + "---\n" + body;
}

void writeSkill(const fs::path& dir, const std::string& folder, const std::string& text)
{
    KF_VERIFY_OK(writeFileAtomic(dir / folder / "SKILL.md", text));
}

std::vector<std::string> chosenNames(const Result<std::vector<SkillChoice>>& r)
{
    std::vector<std::string> out;
    if (r)
        for (const SkillChoice& c : *r)
            out.push_back(c.skill->name);
    return out;
}

QString joinedNames(const std::vector<std::string>& v)
{
    QStringList l;
    for (const auto& s : v)
        l << qs(s);
    return l.join(',');
}

} // namespace

class TestSkills : public QObject {
    Q_OBJECT
private slots:
    void yamlValues_data();
    void yamlValues();
    void yamlRefusals_data();
    void yamlRefusals();
    void yamlLocatesPointers();
    void builtInSkillsAreValid();
    void badSkills_data();
    void badSkills();
    void metadataIsRead();
    void skillDirsOverrideInOrder();
    void badSkillDirsAreReportedNotFatal();
    void autoSelection_data();
    void autoSelection();
    void generalSkillsWhenNothingMatches();
    void namedAndNone();
    void skillRequests_data();
    void skillRequests();
};

void TestSkills::yamlValues_data()
{
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("json");
    QTest::newRow("map of scalars") << "a: 1\nb: x\nc: true\nd: 2.5\ne:\nf: ~\ng: 'quoted 1'\nh: \"7\""
                                    << R"({"a":1,"b":"x","c":true,"d":2.5,"e":null,"f":null,"g":"quoted 1","h":"7"})";
    QTest::newRow("flow map and list") << "tests: [{size: 4, seed: null}, {size: 8, seed: 3}]"
                                       << R"({"tests":[{"size":4,"seed":null},{"size":8,"seed":3}]})";
    QTest::newRow("block list") << "files:\n  - name: a.py\n    source: a.py\n  - name: b\n"
                                << R"({"files":[{"name":"a.py","source":"a.py"},{"name":"b"}]})";
    QTest::newRow("literal block") << "description: |\n  line one\n  line two\n"
                                   << R"({"description":"line one\nline two\n"})";
    QTest::newRow("hex, octal, negative, exponent") << "a: 0x1F\nb: 0o17\nc: -3\nd: 1e-5\ne: .inf"
                                                    << R"({"a":31,"b":15,"c":-3,"d":1e-05,"e":"__inf__"})";
    QTest::newRow("too large an integer is a float") << "a: 99999999999999999999" << R"({"a":1e20})";
    QTest::newRow("version-like text") << "a: 1.2.3\nb: 08:30" << R"({"a":"1.2.3","b":"08:30"})";
    QTest::newRow("empty document") << "" << "null";
    QTest::newRow("comment only") << "# nothing\n" << "null";
}

void TestSkills::yamlValues()
{
    QFETCH(QString, yaml);
    QFETCH(QString, json);
    auto doc = parseYaml(yaml.toStdString(), "t.yml");
    KF_VERIFY_OK(doc);
    nlohmann::json got = doc->value;
    if (got.is_object() && got.contains("e") && got["e"].is_number_float() && std::isinf(got["e"].get<double>()))
        got["e"] = "__inf__";   // JSON has no infinity to compare with
    const nlohmann::json want = nlohmann::json::parse(json.toStdString());
    QVERIFY2(got == want, got.dump().c_str());
}

void TestSkills::yamlRefusals_data()
{
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("why");
    QTest::newRow("anchor") << "a: &x 1\nb: 2" << "t.yml:1:4" << "anchors";
    QTest::newRow("alias of nothing") << "a: 1\nb: *x" << "t.yml:2:4" << "anchor";
    QTest::newRow("tag") << "a: !!str 1" << "t.yml:1:4" << "tags";
    QTest::newRow("duplicate key") << "a: 1\na: 2" << "t.yml:2:1" << "duplicate key 'a'";
    QTest::newRow("complex key") << "? [a, b]\n: 1" << "t.yml:1:3" << "plain text";
    QTest::newRow("two documents") << "a: 1\n---\nb: 2" << "t.yml:2:1" << "second YAML document";
    QTest::newRow("syntax") << "a: [1, 2" << "t.yml:" << "";
    QTest::newRow("bad indentation") << "a:\n  b: 1\n c: 2" << "t.yml:3:" << "";
    QTest::newRow("nesting 40 deep") << QString("a: ") + QString("[").repeated(40) + QString("]").repeated(40)
                                     << "t.yml:1:" << "deeper than 32";
    QTest::newRow("an explicit key over 1024 characters") << "? " + QString("a").repeated(1025) + "\n: 1" << "t.yml:1:3"
                                                          << "key longer than 1024";
    QTest::newRow("NUL byte") << QString("a: 1\n") + QChar(0) << "t.yml" << "NUL";
}

void TestSkills::yamlRefusals()
{
    QFETCH(QString, yaml);
    QFETCH(QString, where);
    QFETCH(QString, why);
    std::string text = yaml.toStdString();
    if (yaml.contains(QChar(0)))
        text = std::string("a: 1\n") + '\0';
    auto doc = parseYaml(text, "t.yml");
    QVERIFY(!doc);
    const QString message = qs(doc.error().message());
    QVERIFY2(qs(doc.error().file).startsWith(where), qPrintable(message));
    QVERIFY2(message.contains(why), qPrintable(message));
}

void TestSkills::yamlLocatesPointers()
{
    // Limits: bytes and nodes, then where values are, shifted by the first line.
    YamlLimits tight;
    tight.maxBytes = 10;
    QVERIFY(!parseYaml("a: 12345678901", "t.yml", 1, tight));
    tight = {};
    tight.maxNodes = 3;
    auto many = parseYaml("[1, 2, 3, 4]", "t.yml", 1, tight);
    QVERIFY(!many);
    QVERIFY2(qs(many.error().why).contains("more than 3"), many.error().why.c_str());

    auto doc = parseYaml("name: x\nmetadata:\n  ops: 1\n", "s.md", 2);
    KF_VERIFY_OK(doc);
    QCOMPARE(qs(doc->locate("s.md", "/metadata/ops")), QString("s.md:4:8"));
    QCOMPARE(qs(doc->locate("s.md", "/metadata/missing")), QString("s.md:4:3"));   // the mapping under metadata
    QCOMPARE(qs(doc->locate("s.md", "/name")), QString("s.md:2:7"));
}

void TestSkills::builtInSkillsAreValid()
{
    const SkillLibrary lib = loadSkills({});
    for (const Error& e : lib.problems)
        qWarning("%s", e.message().c_str());
    QVERIFY(lib.problems.empty());
    QVERIFY2(lib.skills.size() >= 12, qPrintable(QString::number(lib.skills.size())));
    std::vector<std::string> always;
    for (const Skill& s : lib.skills) {
        QVERIFY2(qs(s.origin).endsWith("/SKILL.md (built in)"), s.origin.c_str());
        QVERIFY2(s.description.size() <= 1024, s.name.c_str());
        const auto lines = std::count(s.body.begin(), s.body.end(), '\n') + 1;
        QVERIFY2(lines >= 20 && lines <= 100, qPrintable(qs(s.name) + ": " + QString::number(lines) + " lines"));
        QVERIFY2(s.body.rfind("# ", 0) == 0, qPrintable(qs(s.name) + " does not start with a heading"));
        if (s.always)
            always.push_back(s.name);
    }
    QCOMPARE(joinedNames(always), QString("correctness-hygiene,measuring-honestly"));
    for (const char* name : {"coalescing-vector-loads", "tails-and-boundaries", "warp-block-reductions", "online-softmax",
                             "normalisation-kernels", "half-bf16-arithmetic", "shared-memory-tiling",
                             "occupancy-launch-bounds", "hopper-specifics", "reading-the-profile-panel"})
        QVERIFY2(lib.find(name), name);
}

void TestSkills::badSkills_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("why");
    QTest::newRow("no front matter") << "# Just markdown\n" << "x/SKILL.md" << "no front matter";
    QTest::newRow("unterminated") << "---\nname: x\ndescription: d\n# body" << "x/SKILL.md" << "not closed";
    QTest::newRow("not a mapping") << "---\n- a\n- b\n---\nbody" << "x/SKILL.md" << "must be a mapping";
    QTest::newRow("name differs from folder") << qs(skillText("y")) << "x/SKILL.md:2:7" << "differs from its folder 'x'";
    QTest::newRow("upper case name") << "---\nname: X\ndescription: d\n---\nbody" << "x/SKILL.md:2:7" << "not a skill name";
    QTest::newRow("double hyphen") << "---\nname: a--b\ndescription: d\n---\nbody" << "x/SKILL.md:2:7" << "not a skill name";
    QTest::newRow("name missing") << "---\ndescription: d\n---\nbody" << "x/SKILL.md" << "name";
    QTest::newRow("description 1025 characters")
        << qs("---\nname: x\ndescription: " + std::string(1025, 'd') + "\n---\nbody") << "x/SKILL.md:3:14" << "1 to 1024";
    QTest::newRow("unknown key") << qs(skillText("x", "tags: [a]\n")) << "x/SKILL.md:4:7" << "tags";
    QTest::newRow("metadata not a map") << qs(skillText("x", "metadata: [a]\n")) << "x/SKILL.md:4:11" << "mapping of strings";
    QTest::newRow("metadata value not a string") << qs(skillText("x", "metadata:\n  priority: 50\n")) << "x/SKILL.md:5:13"
                                                 << "quote it";
    QTest::newRow("always not a boolean word") << qs(skillText("x", "metadata:\n  always: \"yes\"\n")) << "x/SKILL.md:5:11"
                                               << "\"true\" or \"false\"";
    QTest::newRow("priority out of range") << qs(skillText("x", "metadata:\n  priority: \"5000\"\n")) << "x/SKILL.md:5:13"
                                           << "0 to 1000";
    QTest::newRow("alias") << "---\nname: x\ndescription: &d d\n---\nbody" << "x/SKILL.md:3:14" << "anchors";
    QTest::newRow("nested 40 deep") << qs(skillText("x", "metadata: " + std::string(40, '[') + std::string(40, ']') + "\n"))
                                    << "x/SKILL.md:4:" << "deeper than 32";
    QTest::newRow("empty body") << qs(skillText("x", {}, "\n  \n")) << "x/SKILL.md:5:1" << "no body";
    QTest::newRow("300 KiB") << qs(skillText("x", {}, std::string(300 * 1024, 'a'))) << "x/SKILL.md" << "at most 262144";
}

void TestSkills::badSkills()
{
    QFETCH(QString, text);
    QFETCH(QString, where);
    QFETCH(QString, why);
    auto s = parseSkill(text.toStdString(), "x/SKILL.md", "x");
    QVERIFY(!s);
    const QString message = qs(s.error().message());
    QVERIFY2(qs(s.error().file).startsWith(where), qPrintable(message));
    QVERIFY2(message.contains(why), qPrintable(message));
}

void TestSkills::metadataIsRead()
{
    auto s = parseSkill(skillText("my-skill", "license: MIT\nmetadata:\n  ops: \"softmax, amax\"\n  dtypes: \"fp16 bf16\"\n"
                                              "  always: \"true\"\n  priority: \"7\"\n  team: \"kernels\"\n"),
                        "my-skill/SKILL.md", "my-skill");
    KF_VERIFY_OK(s);
    QCOMPARE(joinedNames(s->ops), QString("softmax,amax"));
    QCOMPARE(joinedNames(s->dtypes), QString("fp16,bf16"));
    QCOMPARE(joinedNames(s->archs), QString("*"));
    QVERIFY(s->always);
    QCOMPARE(s->priority, 7);
    QCOMPARE(qs(s->metadata.at("team")), QString("kernels"));
    QCOMPARE(qs(s->body), QString("# Body\n\nText."));
}

void TestSkills::skillDirsOverrideInOrder()
{
    QTemporaryDir tmp;
    const fs::path a = fs::path(tmp.path().toStdString()) / "team";
    const fs::path b = fs::path(tmp.path().toStdString()) / "mine";
    writeSkill(a, "online-softmax", skillText("online-softmax", {}, "# Team softmax\n"));
    writeSkill(a, "team-only", skillText("team-only", {}, "# Team only\n"));
    writeSkill(b, "team-only", skillText("team-only", {}, "# Mine\n"));
    const size_t builtIn = loadSkills({}).skills.size();

    const SkillLibrary lib = loadSkills({a, b});
    QVERIFY(lib.problems.empty());
    QCOMPARE(lib.skills.size(), builtIn + 1);
    QCOMPARE(qs(lib.find("online-softmax")->body), QString("# Team softmax"));
    QVERIFY(qs(lib.find("online-softmax")->overrides).endsWith("(built in)"));
    QCOMPARE(qs(lib.find("team-only")->body), QString("# Mine"));
    QVERIFY(qs(lib.find("team-only")->overrides).contains("team"));
    // Without planner keys the replacement keeps the built-in's; with them, its own.
    QCOMPARE(joinedNames(lib.find("online-softmax")->ops), QString("softmax,log_softmax"));
    QCOMPARE(lib.find("online-softmax")->priority, 80);
    writeSkill(b, "online-softmax", skillText("online-softmax", "metadata:\n  ops: \"amax\"\n", "# Mine\n"));
    const SkillLibrary own = loadSkills({a, b});
    QCOMPARE(joinedNames(own.find("online-softmax")->ops), QString("amax"));
    QCOMPARE(own.find("online-softmax")->priority, 50);

    // A folder that is itself one skill.
    const SkillLibrary one = loadSkills({b / "team-only"});
    QVERIFY(one.problems.empty());
    QCOMPARE(qs(one.find("team-only")->body), QString("# Mine"));
}

void TestSkills::badSkillDirsAreReportedNotFatal()
{
    QTemporaryDir tmp;
    const fs::path d = tmp.path().toStdString();
    writeSkill(d, "good", skillText("good"));
    writeSkill(d, "bad", skillText("not-bad"));
    KF_VERIFY_OK(writeFileAtomic(d / "huge" / "SKILL.md", std::string(kMaxSkillBytes + 1, 'x')));
    const SkillLibrary lib = loadSkills({d, d / "missing", fs::path(tmp.path().toStdString()) / "good" / "nothing"});
    QVERIFY(lib.find("good"));
    QVERIFY(!lib.find("not-bad"));
    QCOMPARE(lib.problems.size(), size_t(4));
    QStringList messages;
    for (const Error& e : lib.problems)
        messages << qs(e.message());
    const QString all = messages.join('\n');
    QVERIFY2(all.contains("differs from its folder 'bad'"), qPrintable(all));
    QVERIFY2(all.contains("a SKILL.md may have at most"), qPrintable(all));
    QVERIFY2(all.contains("missing: no such folder"), qPrintable(all));
}

void TestSkills::autoSelection_data()
{
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("skills");
    const QString hygiene = "correctness-hygiene,measuring-honestly,";
    QTest::newRow("rms_norm fp16 on sm_90") << "examples/rms_norm_fp16" << "sm_90"
                                            << hygiene + "normalisation-kernels,warp-block-reductions,half-bf16-arithmetic";
    QTest::newRow("softmax fp32 on sm_90") << "examples/softmax_fp32" << "sm_90"
                                           << hygiene + "online-softmax,warp-block-reductions,hopper-specifics";
    QTest::newRow("gemm fp16 on sm_80") << "examples/gemm_fp16" << "sm_80"
                                        << hygiene + "shared-memory-tiling,occupancy-launch-bounds,half-bf16-arithmetic";
    QTest::newRow("vector_add on sm_90a") << "examples/vector_add" << "sm_90a"
                                          << hygiene + "coalescing-vector-loads,tails-and-boundaries,hopper-specifics";
    QTest::newRow("transpose on sm_80") << "examples/transpose_fp32" << "sm_80"
                                        << hygiene + "shared-memory-tiling,tails-and-boundaries";
    QTest::newRow("TorchScript bias+gelu fp16") << "tests/gen_script_bias_gelu_fp16" << "sm_90"
                                                << hygiene + "coalescing-vector-loads,tails-and-boundaries,half-bf16-arithmetic";
}

void TestSkills::autoSelection()
{
    QFETCH(QString, task);
    QFETCH(QString, arch);
    QFETCH(QString, skills);
    const std::string dir = task.startsWith("examples/")
                                ? std::string(KF_SOURCE_DIR) + "/resources/" + task.toStdString()
                                : std::string(KF_TEST_DATA_DIR) + "/generate/" + task.mid(6).toStdString();
    auto t = loadTask(dir);
    KF_VERIFY_OK(t);
    auto steps = cast::referenceSteps(*t);
    KF_VERIFY_OK(steps);
    const SkillLibrary lib = loadSkills({});
    auto chosen = selectSkills(lib, traitsOf(*t, steps->steps, arch.toStdString()), {});
    KF_VERIFY_OK(chosen);
    QCOMPARE(joinedNames(chosenNames(chosen)), skills);
    for (const SkillChoice& c : *chosen)
        QVERIFY2(!c.reason.empty(), c.skill->name.c_str());
}

void TestSkills::generalSkillsWhenNothingMatches()
{
    SkillLibrary lib = loadSkills({});
    TaskTraits traits;
    traits.ops = {"no_such_op"};
    traits.dtypes = {"int8"};
    traits.arch = "sm_75";
    auto chosen = selectSkills(lib, traits, {});
    KF_VERIFY_OK(chosen);
    const auto names = chosenNames(chosen);
    QCOMPARE(names.size(), size_t(3));   // the two hygiene skills and the one general playbook
    QCOMPARE(qs(names[2]), QString("reading-the-profile-panel"));
    QCOMPARE(qs(chosen->at(2).reason), QString("general"));
}

void TestSkills::namedAndNone()
{
    const SkillLibrary lib = loadSkills({});
    SkillRequest named;
    named.mode = SkillRequest::Mode::Named;
    named.names = {"hopper-specifics", "online-softmax"};
    auto chosen = selectSkills(lib, {}, named);
    KF_VERIFY_OK(chosen);
    QCOMPARE(joinedNames(chosenNames(chosen)), QString("hopper-specifics,online-softmax"));

    named.names = {"no-such-skill"};
    auto bad = selectSkills(lib, {}, named);
    QVERIFY(!bad);
    QVERIFY2(qs(bad.error().message()).contains("no skill is named 'no-such-skill'"), bad.error().message().c_str());
    QVERIFY2(qs(bad.error().hint).contains("online-softmax"), bad.error().hint.c_str());

    SkillRequest none;
    none.mode = SkillRequest::Mode::None;
    auto nothing = selectSkills(lib, {}, none);
    KF_VERIFY_OK(nothing);
    QVERIFY(nothing->empty());
}

void TestSkills::skillRequests_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("mode");
    QTest::addColumn<QString>("names");
    QTest::newRow("auto") << "auto" << int(SkillRequest::Mode::Auto) << "";
    QTest::newRow("empty is auto") << "" << int(SkillRequest::Mode::Auto) << "";
    QTest::newRow("none") << "none" << int(SkillRequest::Mode::None) << "";
    QTest::newRow("names, spaces, repeats") << " a , b,a" << int(SkillRequest::Mode::Named) << "a,b";
    QTest::newRow("empty name") << "a,,b" << -1 << "";
}

void TestSkills::skillRequests()
{
    QFETCH(QString, text);
    QFETCH(int, mode);
    QFETCH(QString, names);
    auto r = parseSkillRequest(text.toStdString());
    if (mode < 0) {
        QVERIFY(!r);
        QVERIFY(qs(r.error().why).contains("empty skill name"));
        return;
    }
    KF_VERIFY_OK(r);
    QCOMPARE(int(r->mode), mode);
    QCOMPARE(joinedNames(r->names), names);
}

QTEST_GUILESS_MAIN(TestSkills)
#include "tst_skills.moc"
