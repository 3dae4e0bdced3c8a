// The runner endpoints file (engine/runner/RunnersConfig.h) shared by the CLI and the workbench:
// read strictly (every error names the file, the pointer, why and what to change), the defaults of
// each kind, "gpus" expanded into one endpoint per GPU, pools, and written back atomically in the
// form it was read from.
#include "testutil.h"

#include "engine/runner/RunnersConfig.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

using namespace kf;

namespace {

/// JSON written with ' for " (the rows stay readable).
QString J(const char* text) { return QString(text).replace('\'', '"'); }

/// A file holding these endpoint entries and top-level keys.
QString doc(const QString& entries, const QString& top = "")
{
    return "{\"schema_version\": 1, \"endpoints\": [" + entries + "]" + top + "}";
}

// The example of the design (the endpoints a user with a box, a cluster and two GPUs writes).
const char* kExample = "{'schema_version': 1, 'default': 'local', 'endpoints': ["
                       " {'name': 'local', 'kind': 'local'},"
                       " {'name': 'h100-0', 'kind': 'local', 'env': {'CUDA_VISIBLE_DEVICES': '0'}},"
                       " {'name': 'box', 'kind': 'ssh', 'host': 'gpu-box.lan', 'user': 'me', 'port': 2222, 'runner': '/opt/kf/bin/kforge-runner',"
                       "  'ssh_options': ['-i', '~/.ssh/id_kf'], 'env': {'CUDA_VISIBLE_DEVICES': '1'}, 'heartbeat_timeout_s': 5},"
                       " {'name': 'cluster', 'kind': 'srun', 'srun_args': ['--gres=gpu:1', '--time=10', '--partition=gpu'], 'start_timeout_s': 1800},"
                       " {'name': 'wrapped', 'kind': 'command', 'command': ['sh', '-c', 'exec \\'$0\\'', '{runner}'], 'shared_fs': true},"
                       " {'name': 'host', 'kind': 'local', 'gpus': 'all'}],"
                       " 'pools': {'two': ['h100-0', 'box']}}";

RunnersConfig parseOk(const QString& text)
{
    auto c = parseRunnersConfig(text.toStdString(), "runners.json");
    if (!c)
        qWarning("%s", c.error().message().c_str());
    return c ? *c : RunnersConfig{};
}

QStringList names(const std::vector<Endpoint>& list)
{
    QStringList out;
    for (const Endpoint& e : list)
        out << qs(e.name);
    return out;
}

} // namespace

class TestRunnersConfig : public QObject {
    Q_OBJECT
private slots:
    void readsTheExample()
    {
        auto c = parseRunnersConfig(J(kExample).toStdString(), "runners.json");
        KF_VERIFY_OK(c);
        QCOMPARE(names(c->endpoints), (QStringList{"local", "h100-0", "box", "cluster", "wrapped"}));
        QCOMPARE(names(c->allGpuTemplates), QStringList{"host"});
        QCOMPARE(c->defaultEndpoint, std::string("local"));
        const Endpoint* box = c->find("box");
        QVERIFY(box && box->kind == Endpoint::Kind::Ssh);
        QCOMPARE(box->describe(), std::string("box (ssh me@gpu-box.lan:2222)"));
        QCOMPARE(box->sshOptions, (std::vector<std::string>{"-i", "~/.ssh/id_kf"}));
        QCOMPARE(box->env.at("CUDA_VISIBLE_DEVICES"), std::string("1"));
        QVERIFY(!box->sharedFs);
        QCOMPARE(c->find("cluster")->startTimeoutS, 1800);
        QVERIFY(c->find("wrapped")->sharedFs);
        QVERIFY(!c->find("host"));
        QCOMPARE(c->pools.at("two"), (std::vector<std::string>{"h100-0", "box"}));
    }

    void defaultsPerKind_data()
    {
        QTest::addColumn<QString>("entry");
        QTest::addColumn<bool>("sharedFs");
        QTest::addColumn<int>("startTimeoutS");
        QTest::addColumn<int>("launchLatencyMs");
        QTest::newRow("local") << J("{'name': 'a', 'kind': 'local'}") << true << 120 << 0;
        QTest::newRow("ssh") << J("{'name': 'a', 'kind': 'ssh', 'host': 'h'}") << false << 120 << 2000;
        QTest::newRow("srun") << J("{'name': 'a', 'kind': 'srun'}") << true << 1800 << 2000;
        QTest::newRow("command") << J("{'name': 'a', 'kind': 'command', 'command': ['{runner}']}") << false << 120 << 2000;
    }
    void defaultsPerKind()
    {
        QFETCH(QString, entry);
        QFETCH(bool, sharedFs);
        QFETCH(int, startTimeoutS);
        QFETCH(int, launchLatencyMs);
        const RunnersConfig c = parseOk(doc(entry));
        const Endpoint* e = c.find("a");
        QVERIFY(e);
        QCOMPARE(e->sharedFs, sharedFs);
        QCOMPARE(e->startTimeoutS, startTimeoutS);
        QCOMPARE(e->launchLatencyMs, launchLatencyMs);
        QCOMPARE(e->idleTimeoutS, 600);
        QCOMPARE(e->heartbeatTimeoutS, 5);
        QVERIFY(e->pool && e->runner.empty() && e->sanitizer.empty());
        // Defaults are not written back; what is written reads back the same.
        QVERIFY(c.toJson().find("timeout") == std::string::npos);
        QCOMPARE(parseOk(qs(c.toJson())).toJson(), c.toJson());
    }

    void missingFileIsTheBuiltInLocal()
    {
        QTemporaryDir dir;
        auto c = readRunnersConfig(std::filesystem::path(dir.path().toStdString()) / "absent.json");
        KF_VERIFY_OK(c);
        QCOMPARE(names(c->endpoints), QStringList{"local"});
        QCOMPARE(c->endpoints[0].argv("/r"), std::vector<std::string>{"/r"});
        QCOMPARE(c->defaultEndpoint, std::string("local"));
        QVERIFY(c->pools.empty() && c->allGpuTemplates.empty());
        // A folder is not a file.
        QVERIFY(!readRunnersConfig(dir.path().toStdString()).ok());
    }

    void roundTripsAndWritesAtomically()
    {
        const RunnersConfig c = parseOk(J(kExample));
        const std::string text = c.toJson();
        const RunnersConfig again = parseOk(qs(text));
        QCOMPARE(again.toJson(), text);
        QCOMPARE(names(again.endpoints), names(c.endpoints));
        for (const Endpoint& e : c.endpoints)
            QCOMPARE(again.find(e.name)->argv("/r"), e.argv("/r"));

        QTemporaryDir dir;
        const auto file = std::filesystem::path(dir.path().toStdString()) / "sub" / "runners.json";
        KF_VERIFY_OK(writeRunnersConfig(file, c));
        auto read = readRunnersConfig(file);
        KF_VERIFY_OK(read);
        QCOMPARE(read->toJson(), text);
        // Written again over itself: only the file is left (no temporaries beside it).
        KF_VERIFY_OK(writeRunnersConfig(file, *read));
        QCOMPARE(QDir(dir.path() + "/sub").entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList{"runners.json"});
    }

    void gpusArrayExpands()
    {
        const RunnersConfig c = parseOk(doc(J("{'name': 'h100', 'kind': 'local', 'gpus': [1, 0], 'env': {'X': 'y'}, 'pool': false},"
                                              "{'name': 'z', 'kind': 'local'}"),
                                            J(", 'default': 'h100/0', 'pools': {'p': ['h100/1']}")));
        QCOMPARE(names(c.endpoints), (QStringList{"local", "h100/1", "h100/0", "z"}));
        QCOMPARE(c.find("h100/1")->env, (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "1"}, {"X", "y"}}));
        QCOMPARE(c.find("h100/0")->childEnv(), (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0", "X=y"}));
        QVERIFY(!c.find("h100/0")->pool);
        QCOMPARE(c.defaultEndpoint, std::string("h100/0"));
        // Written back as the one entry, in its place.
        const std::string text = c.toJson();
        QVERIFY2(text.find("\"name\": \"h100\"") != std::string::npos && text.find("\"name\": \"h100/") == std::string::npos, text.c_str());
        QVERIFY(text.find("CUDA_VISIBLE_DEVICES") == std::string::npos);
        QCOMPARE(names(parseOk(qs(text)).endpoints), names(c.endpoints));
        QCOMPARE(parseOk(qs(text)).toJson(), text);
    }

    void gpusAllIsATemplate()
    {
        const RunnersConfig c = parseOk(doc(J("{'name': 'host', 'kind': 'local', 'gpus': 'all', 'idle_timeout_s': 60}")));
        QCOMPARE(names(c.endpoints), QStringList{"local"});
        QCOMPARE(names(c.allGpuTemplates), QStringList{"host"});
        QCOMPARE(c.allGpuTemplates[0].idleTimeoutS, 60);
        QVERIFY(c.allGpuTemplates[0].env.empty());
        QVERIFY(!c.find("host"));
        QVERIFY(c.toJson().find("\"gpus\": \"all\"") != std::string::npos);
        QCOMPARE(parseOk(qs(c.toJson())).toJson(), c.toJson());
    }

    void localMayBeRedefined()
    {
        const RunnersConfig c = parseOk(doc(J("{'name': 'b', 'kind': 'srun'}, {'name': 'local', 'kind': 'local', 'runner': '/opt/r'}")));
        QCOMPARE(names(c.endpoints), (QStringList{"b", "local"}));
        QCOMPARE(c.find("local")->argv("/default"), std::vector<std::string>{"/opt/r"});
        QCOMPARE(parseOk(qs(c.toJson())).toJson(), c.toJson());
    }

    void poolSelection()
    {
        const RunnersConfig c = parseOk(doc(J("{'name': 'a', 'kind': 'local'}, {'name': 'b', 'kind': 'srun', 'pool': false},"
                                              "{'name': 'c', 'kind': 'ssh', 'host': 'h'}"),
                                            J(", 'pools': {'pair': ['c', 'b'], 'one': ['a']}")));
        auto all = c.poolEndpoints("");
        KF_VERIFY_OK(all);
        // The built-in "local" (not in the file) does not join: a pool of remote GPUs should
        // not also load this machine.
        QCOMPARE(names(*all), (QStringList{"a", "c"}));
        auto pair = c.poolEndpoints("pair");
        KF_VERIFY_OK(pair);
        QCOMPARE(names(*pair), (QStringList{"c", "b"}));
        auto none = c.poolEndpoints("trio");
        QVERIFY(!none.ok());
        QVERIFY2(none.error().message().find("no pool is named \"trio\"") != std::string::npos, none.error().message().c_str());
        QVERIFY2(none.error().message().find("one, pair") != std::string::npos, none.error().message().c_str());
        auto nothing = RunnersConfig{}.poolEndpoints("x");
        QVERIFY(!nothing.ok() && nothing.error().hint.find("defines no pools") != std::string::npos);
    }

    void pathFromTheEnvironment()
    {
        const QByteArray oldFile = qgetenv("KF_RUNNERS_FILE"), oldXdg = qgetenv("XDG_CONFIG_HOME");
        qputenv("KF_RUNNERS_FILE", "/tmp/r.json");
        QCOMPARE(runnersConfigPath().string(), std::string("/tmp/r.json"));
        qunsetenv("KF_RUNNERS_FILE");
        qputenv("XDG_CONFIG_HOME", "/cfg");
        QCOMPARE(runnersConfigPath().string(), std::string("/cfg/KernelForge/runners.json"));
        if (!oldFile.isNull())
            qputenv("KF_RUNNERS_FILE", oldFile);
        if (oldXdg.isNull())
            qunsetenv("XDG_CONFIG_HOME");
        else
            qputenv("XDG_CONFIG_HOME", oldXdg);
    }

    void acceptsOptionValuesThatLookRefused()
    {
        // "-tmp" is -i's value, and RequestTTY as a -L forward's text is no -o.
        const RunnersConfig c = parseOk(doc(J("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-i', '-tmp', '-vo', 'Compression=yes',"
                                              " '-L', '1:RequestTTY:2', '-oServerAliveInterval=1']}")));
        QVERIFY(c.find("a"));
    }

    void refusesWithAPointer_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("words");
        auto one = [](const char* entry, const char* top = "") { return doc(J(entry), J(top)); };
        auto row = [](const char* name, const QString& text, const char* pointer, const char* words) {
            QTest::newRow(name) << text << QString(pointer) << J(words);
        };
        row("schema_version newer", J("{'schema_version': 2}"), "/schema_version", "schema_version 2 is newer than this KernelForge reads (1)");
        row("schema_version 0", J("{'schema_version': 0}"), "/schema_version", "must be 1");
        row("schema_version missing", J("{'endpoints': []}"), "/", "missing required key 'schema_version'");
        row("unknown top key", one("", ", 'endpoint': []"), "/endpoint", "unknown key 'endpoint'");
        row("endpoints not an array", J("{'schema_version': 1, 'endpoints': {}}"), "/endpoints", "expected an array");
        row("unknown endpoint key", one("{'name': 'a', 'kind': 'local', 'hots': 'x'}"), "/endpoints/0/hots", "unknown key 'hots'");
        row("name upper case", one("{'name': 'Box', 'kind': 'local'}"), "/endpoints/0/name", "lower-case letters");
        row("name with /", one("{'name': 'a/0', 'kind': 'local'}"), "/endpoints/0/name", "the name 'a/0'");
        row("name too long", doc("{\"name\": \"" + QString(65, 'a') + "\", \"kind\": \"local\"}"), "/endpoints/0/name", "1 to 64");
        row("name twice", one("{'name': 'box', 'kind': 'srun'}, {'name': 'a', 'kind': 'local'}, {'name': 'box', 'kind': 'local'}"),
            "/endpoints/2/name", "'box' is named twice, at /endpoints/0 and /endpoints/2");
        row("kind missing", one("{'name': 'a'}"), "/endpoints/0", "missing required key 'kind'");
        row("kind slurm", one("{'name': 'a', 'kind': 'slurm'}"), "/endpoints/0/kind", "kind 'slurm' is not one of local, ssh, srun, command");
        row("local as ssh", one("{'name': 'local', 'kind': 'ssh', 'host': 'h'}"), "/endpoints/0/kind", "may only be of kind local");
        row("env name", one("{'name': 'a', 'kind': 'local', 'env': {'1X': 'v'}}"), "/endpoints/0/env/1X", "environment variable name '1X'");
        row("env newline", one("{'name': 'a', 'kind': 'local', 'env': {'A': 'x\\ny'}}"), "/endpoints/0/env/A", "line break");
        row("env not text", one("{'name': 'a', 'kind': 'local', 'env': {'A': 1}}"), "/endpoints/0/env/A", "expected a string");
        row("srun CUDA_VISIBLE_DEVICES", one("{'name': 'a', 'kind': 'srun', 'env': {'CUDA_VISIBLE_DEVICES': '0'}}"),
            "/endpoints/0/env/CUDA_VISIBLE_DEVICES", "Slurm sets CUDA_VISIBLE_DEVICES for --gres (leave it out");
        row("runner empty", one("{'name': 'a', 'kind': 'local', 'runner': ''}"), "/endpoints/0/runner", "not empty");
        row("runner option", one("{'name': 'a', 'kind': 'srun', 'runner': '--x'}"), "/endpoints/0/runner", "starts with '-'");
        row("ssh without host", one("{'name': 'a', 'kind': 'ssh'}"), "/endpoints/0", "needs 'host'");
        row("host an option", one("{'name': 'a', 'kind': 'ssh', 'host': '-oProxyCommand=x'}"), "/endpoints/0/host",
            "host '-oProxyCommand=x' starts with '-'");
        row("host on local", one("{'name': 'a', 'kind': 'local', 'host': 'h'}"), "/endpoints/0/host", "applies to ssh endpoints only");
        row("port on srun", one("{'name': 'a', 'kind': 'srun', 'port': 22}"), "/endpoints/0/port", "applies to ssh endpoints only");
        row("user on command", one("{'name': 'a', 'kind': 'command', 'command': ['{runner}'], 'user': 'me'}"), "/endpoints/0/user", "ssh");
        row("port 0", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'port': 0}"), "/endpoints/0/port", "port 0 is not from 1 to 65535");
        row("port 65536", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'port': 65536}"), "/endpoints/0/port", "not from 1 to 65535");
        row("port text", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'port': '22'}"), "/endpoints/0/port", "expected an integer");
        row("ssh -t", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-t']}"), "/endpoints/0/ssh_options/0",
            "a pseudo-terminal rewrites protocol lines (leave -t out)");
        row("ssh -tt", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-v', '-tt']}"), "/endpoints/0/ssh_options/1", "pseudo-terminal");
        row("ssh -vt", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-vt']}"), "/endpoints/0/ssh_options/0", "pseudo-terminal");
        row("ssh -o RequestTTY", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-o', 'RequestTTY=force']}"),
            "/endpoints/0/ssh_options/1", "pseudo-terminal");
        row("ssh -orequesttty", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-orequesttty yes']}"),
            "/endpoints/0/ssh_options/0", "pseudo-terminal");
        row("ssh -N", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-N']}"), "/endpoints/0/ssh_options/0", "no remote command");
        row("ssh -f", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-f']}"), "/endpoints/0/ssh_options/0", "background");
        row("ssh stray word", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['other-host']}"), "/endpoints/0/ssh_options/0",
            "options only");
        row("ssh -o without value", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'ssh_options': ['-o']}"), "/endpoints/0/ssh_options/0",
            "needs a value");
        row("srun --pty", one("{'name': 'a', 'kind': 'srun', 'srun_args': ['-u', '--pty']}"), "/endpoints/0/srun_args/1",
            "a pseudo-terminal rewrites protocol lines (leave --pty out)");
        row("srun_args on ssh", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'srun_args': []}"), "/endpoints/0/srun_args", "srun endpoints only");
        row("command missing", one("{'name': 'a', 'kind': 'command'}"), "/endpoints/0", "needs 'command'");
        row("command without runner", one("{'name': 'a', 'kind': 'command', 'command': ['sh', '-c', 'x']}"), "/endpoints/0/command",
            "command has no '{runner}' element");
        row("command runner twice", one("{'name': 'a', 'kind': 'command', 'command': ['{runner}', 'x', '{runner}']}"),
            "/endpoints/0/command/2", "twice");
        row("command NUL", one("{'name': 'a', 'kind': 'command', 'command': ['{runner}', 'a\\u0000b']}"), "/endpoints/0/command/1", "NUL");
        row("command on local", one("{'name': 'a', 'kind': 'local', 'command': ['{runner}']}"), "/endpoints/0/command", "command endpoints only");
        row("shared_fs text", one("{'name': 'a', 'kind': 'local', 'shared_fs': 'yes'}"), "/endpoints/0/shared_fs", "expected true or false");
        row("start_timeout_s 0", one("{'name': 'a', 'kind': 'local', 'start_timeout_s': 0}"), "/endpoints/0/start_timeout_s", "from 1 to 86400");
        row("idle_timeout_s big", one("{'name': 'a', 'kind': 'local', 'idle_timeout_s': 86401}"), "/endpoints/0/idle_timeout_s", "from 1 to 86400");
        row("heartbeat_timeout_s", one("{'name': 'a', 'kind': 'local', 'heartbeat_timeout_s': 601}"), "/endpoints/0/heartbeat_timeout_s",
            "from 1 to 600");
        row("launch_latency_ms", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'launch_latency_ms': 60001}"), "/endpoints/0/launch_latency_ms",
            "from 0 to 60000");
        row("pool text", one("{'name': 'a', 'kind': 'local', 'pool': 1}"), "/endpoints/0/pool", "expected true or false");
        row("gpus on ssh", one("{'name': 'a', 'kind': 'ssh', 'host': 'h', 'gpus': [0]}"), "/endpoints/0/gpus", "local endpoints only");
        row("gpus some", one("{'name': 'a', 'kind': 'local', 'gpus': 'some'}"), "/endpoints/0/gpus", "'all' or an array");
        row("gpus empty", one("{'name': 'a', 'kind': 'local', 'gpus': []}"), "/endpoints/0/gpus", "lists 0 GPUs");
        row("gpus twice", one("{'name': 'a', 'kind': 'local', 'gpus': [0, 0]}"), "/endpoints/0/gpus/1", "GPU 0 is listed twice");
        row("gpus negative", one("{'name': 'a', 'kind': 'local', 'gpus': [-1]}"), "/endpoints/0/gpus/0", "not from 0 to 1023");
        row("gpus and CUDA_VISIBLE_DEVICES", one("{'name': 'a', 'kind': 'local', 'gpus': [0], 'env': {'CUDA_VISIBLE_DEVICES': '1'}}"),
            "/endpoints/0/env/CUDA_VISIBLE_DEVICES", "gpus sets CUDA_VISIBLE_DEVICES");
        row("gpus on local", one("{'name': 'local', 'kind': 'local', 'gpus': [0]}"), "/endpoints/0/gpus", "cannot list GPUs");
        row("default names nothing", one("{'name': 'a', 'kind': 'local'}", ", 'default': 'nope'"), "/default", "no endpoint is named 'nope' (the endpoints are: local, a)");
        row("default names a gpus entry", one("{'name': 'h100', 'kind': 'local', 'gpus': [0, 1]}", ", 'default': 'h100'"), "/default",
            "its endpoints are 'h100/0', 'h100/1' (name one of them, e.g. 'h100/0')");
        row("default names gpus all", one("{'name': 'host', 'kind': 'local', 'gpus': 'all'}", ", 'default': 'host'"), "/default", "gpus 'all'");
        row("pool names nothing", one("{'name': 'a', 'kind': 'local'}", ", 'pools': {'two': ['a', 'b']}"), "/pools/two/1", "no endpoint is named 'b'");
        row("pool twice", one("{'name': 'a', 'kind': 'local'}", ", 'pools': {'two': ['a', 'a']}"), "/pools/two/1", "'a' is in pool 'two' twice");
        row("pool empty", one("{'name': 'a', 'kind': 'local'}", ", 'pools': {'two': []}"), "/pools/two", "names no endpoint");
        row("pool not an array", one("", ", 'pools': {'two': 'a'}"), "/pools/two", "expected an array");
        row("pool names a gpus entry", one("{'name': 'h', 'kind': 'local', 'gpus': [3]}", ", 'pools': {'p': ['h']}"), "/pools/p/0", "'h/3'");
        row("pool name", one("", ", 'pools': {'Two': ['local']}"), "/pools/Two", "the pool name 'Two'");
        row("not json", "{", "", "invalid JSON");
    }
    void refusesWithAPointer()
    {
        QFETCH(QString, text);
        QFETCH(QString, pointer);
        QFETCH(QString, words);
        auto c = parseRunnersConfig(text.toStdString(), "runners.json");
        QVERIFY(!c.ok());
        const std::string message = c.error().message();
        QCOMPARE(c.error().file, std::string("runners.json"));
        QCOMPARE(qs(c.error().pointer), pointer);
        if (!pointer.isEmpty())
            QVERIFY2(message.rfind("runners.json: at " + pointer.toStdString() + ": ", 0) == 0, message.c_str());
        QVERIFY2(!c.error().hint.empty() && message.back() == ')', message.c_str());
        QVERIFY2(message.find(words.toStdString()) != std::string::npos, message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRunnersConfig)
#include "tst_runnersconfig.moc"
