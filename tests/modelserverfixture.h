#pragma once
// Test helper: the scripted model server (tests/fixtures/model_server.py, a test fixture) started
// with QProcess for one test, its base URLs and the requests it logged. Needs python3 on PATH;
// tests QSKIP without it (KF_START_MODEL_SERVER).
#include "engine/synth/ModelClient.h"
#include "testpaths.h"

#include <QByteArray>
#include <QDeadlineTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

class ModelServerFixture {
public:
    ModelServerFixture() = default;
    ModelServerFixture(const ModelServerFixture&) = delete;
    ModelServerFixture& operator=(const ModelServerFixture&) = delete;
    ~ModelServerFixture()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    static bool havePython() { return !QStandardPaths::findExecutable("python3").isEmpty(); }

    /// Starts the server with `script` (a JSON list of responses) and waits for its PORT line;
    /// "" on success, else what went wrong.
    std::string start(const nlohmann::json& script)
    {
        if (!m_dir.isValid())
            return "no temporary folder";
        const QString scriptPath = m_dir.filePath("script.json");
        QFile f(scriptPath);
        if (!f.open(QIODevice::WriteOnly))
            return "cannot write the script";
        f.write(QByteArray::fromStdString(script.dump()));
        f.close();
        m_log = m_dir.filePath("requests.jsonl");
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.start("python3", {QString(KF_SOURCE_DIR) + "/tests/fixtures/model_server.py", "--script",
                                    scriptPath, "--log", m_log});
        if (!m_process.waitForStarted(10000))
            return "python3 did not start";
        QByteArray out;
        const QDeadlineTimer deadline(15000);
        while (!out.contains('\n')) {
            if (deadline.hasExpired() || !m_process.waitForReadyRead(int(deadline.remainingTime())))
                return "the fixture printed no PORT line: " + m_process.readAllStandardError().toStdString();
            out += m_process.readAllStandardOutput();
        }
        const QByteArray line = out.left(out.indexOf('\n')).trimmed();
        if (!line.startsWith("PORT "))
            return "unexpected first line: " + line.toStdString();
        m_port = line.mid(5).toInt();
        return m_port > 0 ? "" : "bad port";
    }

    int port() const { return m_port; }

    /// The base URL a ModelConfig of `provider` uses for this server.
    std::string baseUrl(kf::synth::Provider provider) const
    {
        const std::string root = "http://127.0.0.1:" + std::to_string(m_port);
        return provider == kf::synth::Provider::OpenAI ? root + "/v1" : root;
    }

    /// The requests served so far, one JSON object each: method, path, headers, body.
    std::vector<nlohmann::json> requests() const
    {
        std::vector<nlohmann::json> out;
        QFile f(m_log);
        if (!f.open(QIODevice::ReadOnly))
            return out;
        for (const QByteArray& line : f.readAll().split('\n'))
            if (!line.trimmed().isEmpty())
                out.push_back(nlohmann::json::parse(line.toStdString(), nullptr, false));
        return out;
    }

    /// A request header by name, case-insensitively ("" when absent).
    static std::string header(const nlohmann::json& request, const std::string& name)
    {
        if (!request.contains("headers"))
            return {};
        for (const auto& [key, value] : request["headers"].items())
            if (QString::fromStdString(key).compare(QString::fromStdString(name), Qt::CaseInsensitive) == 0)
                return value.get<std::string>();
        return {};
    }

private:
    QTemporaryDir m_dir;
    QString m_log;
    QProcess m_process;
    int m_port = 0;
};

/// Starts `fixture` with `script`, skipping the test without python3 and failing it when the
/// server does not come up.
#define KF_START_MODEL_SERVER(fixture, script)                                                   \
    do {                                                                                         \
        if (!ModelServerFixture::havePython())                                                   \
            QSKIP("python3 is not on PATH: the scripted model server cannot run");               \
        const std::string kf_why_ = (fixture).start(script);                                     \
        QVERIFY2(kf_why_.empty(), kf_why_.c_str());                                              \
    } while (0)
