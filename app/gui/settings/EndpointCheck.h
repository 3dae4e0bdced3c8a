#pragma once
// Settings ▸ Runners' Check (app/gui/settings/RunnersPage.h): start an endpoint's runner, wait for
// its hello, ping it, stop it, and say what was found in one line.

#include "engine/compile/CompileTypes.h"
#include "engine/runner/RunnersConfig.h"

#include <QMetaType>
#include <QString>

namespace kf::app {

/// What starting an endpoint's runner found (kforge runners check does the same).
struct EndpointCheck {
    QString endpoint;
    bool ok = false;           ///< the runner said hello and answered a ping
    bool cancelled = false;
    QString error;             ///< why it did not start or answer (the supervisor's sentence)
    QString host;
    QString gpu;               ///< "NVIDIA H100 80GB HBM3"; empty without a device
    QString deviceError;       ///< why the runner has no device
    QString uuid;
    QString arch;
    QString sanitizer;         ///< compute-sanitizer's version on that host, or empty
    QString runnerBuild;
    double startMs = 0;        ///< until the hello
    double pingMs = 0;         ///< one ping's round trip

    /// "gpu-box · NVIDIA H100 80GB HBM3 · GPU-1a2b3c4d-… · sm_90 · compute-sanitizer 2025.3.1.0 ·
    /// started in 1.2 s · round trip 0.8 ms", or the error sentence.
    QString text() const;
};

/// Starts `endpoint`'s runner (the local runner at `localRunner`, empty: the default), waits for
/// its hello, pings it and stops it. Blocking: call it off the UI thread. `cancel` stops the wait.
EndpointCheck checkEndpoint(const kf::Endpoint& endpoint, const QString& localRunner, const kf::CancelToken* cancel);

} // namespace kf::app

Q_DECLARE_METATYPE(kf::app::EndpointCheck)
