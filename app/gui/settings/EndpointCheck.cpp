// An endpoint's Check (app/gui/settings/EndpointCheck.h).
#include "app/gui/settings/EndpointCheck.h"

#include "engine/runner/Supervisor.h"

#include <QStringList>

#include <chrono>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

double msSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

QString EndpointCheck::text() const
{
    if (cancelled)
        return QStringLiteral("check cancelled");
    if (!ok && gpu.isEmpty() && host.isEmpty())
        return error.isEmpty() ? QStringLiteral("the runner did not start") : error;
    QStringList parts;
    if (!host.isEmpty())
        parts << host;
    parts << (gpu.isEmpty() ? QStringLiteral("no GPU: %1").arg(deviceError.isEmpty() ? QStringLiteral("the runner found none") : deviceError) : gpu);
    if (!uuid.isEmpty())
        parts << uuid;
    if (!arch.isEmpty())
        parts << arch;
    parts << (sanitizer.isEmpty() ? QStringLiteral("no compute-sanitizer") : QStringLiteral("compute-sanitizer %1").arg(sanitizer));
    parts << QStringLiteral("started in %1 s").arg(QString::number(startMs / 1000.0, 'f', 1));
    if (ok)
        parts << QStringLiteral("round trip %1 ms").arg(QString::number(pingMs, 'f', 1));
    QString out = parts.join(QStringLiteral(" · "));
    if (!ok && !error.isEmpty())
        out += QStringLiteral(" — ") + error;
    return out;
}

EndpointCheck checkEndpoint(const kf::Endpoint& endpoint, const QString& localRunner, const kf::CancelToken* cancel)
{
    EndpointCheck r;
    r.endpoint = qs(endpoint.name);
    RunnerSupervisor::Options o = RunnerSupervisor::forEndpoint(endpoint, localRunner.toStdString());
    o.startCancel = cancel;
    RunnerSupervisor runner(o);
    const auto t0 = std::chrono::steady_clock::now();
    auto hello = runner.hello();
    r.startMs = msSince(t0);
    r.cancelled = cancel && cancel->cancelled();
    if (!hello) {
        r.error = qs(hello.error().message());
        return r;
    }
    const protocol::Hello& h = hello.value();
    r.host = qs(h.host);
    r.runnerBuild = qs(h.runnerBuild);
    r.deviceError = qs(h.deviceError);
    if (h.device) {
        r.gpu = qs(h.device->gpu);
        r.uuid = qs(h.device->uuid);
    }
    r.arch = qs(h.arch());
    if (h.sanitizer)
        r.sanitizer = qs(h.sanitizer->version);
    const auto t1 = std::chrono::steady_clock::now();
    auto pong = runner.control({{"type", "ping"}}, {}, cancel);
    r.pingMs = msSince(t1);
    r.cancelled = cancel && cancel->cancelled();
    r.ok = static_cast<bool>(pong) && !r.cancelled;
    if (!pong)
        r.error = qs(pong.error().message());
    runner.stop();
    return r;
}

} // namespace kf::app
