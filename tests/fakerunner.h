#pragma once
// Test fixture: a scripted stand-in for kforge-runner, so RunSession, RunService and
// RunController are tested without a GPU or LibTorch. It speaks protocol 3 (engine/protocol/):
// a hello naming a fake GPU on host "fake-host" (UUID GPU-1a2b3c4d-…, compute-sanitizer
// 2025.3.1.0), then for every run request the events and the final message of the
// chosen Behaviour. It is a shell script written into a temporary folder; nothing here is the
// product's runner, and no test presents it as one.
#include "engine/protocol/Protocol.h"
#include "engine/task/Task.h"
#include "testpaths.h"

#include <QDir>
#include <QFile>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace kf::test {

class FakeRunner {
public:
    enum class Behaviour {
        Pass,          ///< progress, launch_begin/end, a warning log line, a passing report
        SlowPass,      ///< as Pass, after a second of "work": a run that is still on the GPU when the next comes
        Crash,         ///< progress, launch_begin, then SIGSEGV
        Garbage,       ///< a line that is not JSON
        OldProtocol,   ///< a hello of protocol 1
        UnknownEvent,  ///< an event type protocol 2 does not have
        BenchOk,       ///< an "ok" performance report with one shape
        Freeze,        ///< progress, then the process stops itself (SIGSTOP): no heartbeat, no end
        /// A failing correctness report (vector_add/naive.cu, one shape that passed) whose
        /// compute-sanitizer section has two made-up findings, a memcheck read at line 9 and a
        /// racecheck pair at lines 9 and 7, and whose placement names endpoint "box".
        SanitizerFindings,
    };

    /// `withSanitizer`: the hello names a compute-sanitizer on the fake host (and the "sanitize"
    /// feature), as a runner whose host has the tool does.
    explicit FakeRunner(Behaviour b, bool withSanitizer = true) : m_dir(std::make_unique<QTemporaryDir>())
    {
        const QString v = QString::number(protocol::kVersion);
        const QString sanitizer = withSanitizer ? QStringLiteral(R"(,"sanitize"],"sanitizer":{"path":"/fake/compute-sanitizer",)"
                                                                 R"("version":"2025.3.1.0"})")
                                                : QStringLiteral("]");
        const QString hello = b == Behaviour::OldProtocol
                                  ? QStringLiteral(R"({"type":"hello","protocol":1,"device":null})")
                                  : QStringLiteral(R"({"type":"hello","protocol_version":%1,"device":{"gpu":"Fake GPU","arch":"sm_90",)"
                                                   R"("compute_capability":"9.0","sm_count":132,"driver":"0.0",)"
                                                   R"("uuid":"GPU-1a2b3c4d-0000-4000-8000-00000000fa4e","pci_bus_id":"0000:18:00.0"},"device_error":"",)"
                                                   R"("host":"fake-host","visible_devices":"1",)"
                                                   R"("features":["dump","inputs_dir","only_shapes","samples","first_trial","profile","heartbeat")"
                                                   R"(%2,"versions":{"torch":"fake"}})")
                                        .arg(v, sanitizer);
        QString answer;
        const QString report =
            QStringLiteral(R"({"type":"report","protocol_version":%1,"report":{"schema_version":1,"kind":"correctness",)"
                           R"("verdict":"pass","summary":"fake pass","task":{"name":"vector_add","hash":"h"},)"
                           R"("candidate":{"file":"naive.cu","source_hash":"s","arch":"sm_90"},"environment":{"gpu":"Fake GPU"},)"
                           R"("trials_per_shape":1,"discriminates":true,"seeds":["0x1"],"shapes":[{"shape":{"N":4099},)"
                           R"("label":"tail","set":"tests","passed":true,"negative_control":[],"trials":[{"trial":0,"seed":"0x1",)"
                           R"("passed":true,"failure":"","launch_error":"","outputs":[{"output":"c","passed":true,"elements":4099,)"
                           R"("mismatches":0,"max_abs_error":1e-7,"max_rel_error":2e-7,"golden":{"available":true,)"
                           R"("candidate_max_error":1e-7,"candidate_rms_error":1e-8,"libtorch_max_error":1e-7,"libtorch_rms_error":2e-8}}]}]}]}})")
                .arg(v);
        const QString event = QStringLiteral(R"(echo '{"type":"%2","protocol_version":%1%3}')");
        auto say = [&](const char* type, const QString& fields) { return event.arg(v, QString::fromLatin1(type), fields) + '\n'; };
        switch (b) {
        case Behaviour::SlowPass:
            answer = "sleep 1\n";
            [[fallthrough]];
        case Behaviour::Pass:
            answer += say("progress", R"(,"permille":250,"stage":"shape 1/1 tail (N=4099) trial 1/1")") +
                     say("launch_begin", R"fr(,"label":"launch 1 (vector_add)","timeout_ms":5000)fr") + say("launch_end", "") +
                     say("log", R"(,"level":"warning","text":"persisting L2 lines could not be reset")") +
                     say("progress", R"(,"permille":1000,"stage":"done")") + "echo '" + report + "'\n";
            break;
        case Behaviour::Crash:
            answer = say("progress", R"(,"permille":100,"stage":"shape 1/1")") +
                     say("launch_begin", R"fr(,"label":"launch 1 (vector_add)","timeout_ms":5000)fr") + "kill -SEGV $$\n";
            break;
        case Behaviour::Garbage: answer = "echo 'Segmentation fault (core dumped)'\n"; break;
        case Behaviour::Freeze: answer = say("progress", R"(,"permille":100,"stage":"shape 1/1")") + "kill -STOP $$\n"; break;
        case Behaviour::OldProtocol: answer = "exit 0\n"; break;
        case Behaviour::UnknownEvent: answer = say("telemetry", R"(,"clock_mhz":1980)"); break;
        case Behaviour::SanitizerFindings: {
            const QString access = QStringLiteral(R"({"access":"%1","kernel":"vector_add","file":"naive.cu","line":%2,"pc":"",)"
                                                  R"("block":[16,0,0],"thread":[%3,0,0]})");
            const QString sanitizer =
                QStringLiteral(R"({"ran":true,"reason":"","tool_version":"2025.3.1.0","tool_path":"/fake/compute-sanitizer",)"
                               R"("shapes":["N=4099"],"seed":"0x1","duration_ms":2400,"tools":[)"
                               R"({"tool":"memcheck","ran":true,"skipped":"","error":"","exit_code":86,"duration_ms":1900,"findings":1,"truncated":false,"ignored":0},)"
                               R"({"tool":"racecheck","ran":true,"skipped":"","error":"","exit_code":86,"duration_ms":2300,"findings":1,"truncated":false,"ignored":0},)"
                               R"({"tool":"initcheck","ran":true,"skipped":"","error":"","exit_code":0,"duration_ms":1500,"findings":0,"truncated":false,"ignored":0},)"
                               R"({"tool":"synccheck","ran":true,"skipped":"","error":"","exit_code":0,"duration_ms":1400,"findings":0,"truncated":false,"ignored":0}],)"
                               R"("findings":[{"tool":"memcheck","kind":"oob_read","severity":"error","description":"Invalid __global__ read of size 4 bytes",)"
                               R"("where":%1,"space":"__global__","size":4,"address":"0x7f0000004010","count":2,"host_side":false},)"
                               R"({"tool":"racecheck","kind":"shared_race","severity":"warning","description":"Race reported between Write access and Read access",)"
                               R"("where":%2,"other":%3,"space":"__shared__","size":4,"address":"","count":1,"host_side":false}]})")
                    .arg(access.arg("read").arg(9).arg(3), access.arg("write").arg(9).arg(5), access.arg("read").arg(7).arg(6));
            const QString failing =
                QStringLiteral(R"({"type":"report","protocol_version":%1,"report":{"schema_version":1,"kind":"correctness",)"
                               R"("verdict":"fail","summary":"1 of 1 test shapes passed; compute-sanitizer memcheck: out-of-bounds read",)"
                               R"("task":{"name":"vector_add","hash":"h"},)"
                               R"("candidate":{"file":"naive.cu","source_hash":"s","arch":"sm_90"},"environment":{"gpu":"Fake GPU"},)"
                               R"("placement":{"endpoint":"box","attempt":1,"host":"fake-host","gpu_uuid":"GPU-1a2b3c4d-0000-4000-8000-00000000fa4e",)"
                               R"("pci_bus_id":"0000:18:00.0","visible_devices":"1"},)"
                               R"("trials_per_shape":1,"discriminates":true,"seeds":["0x1"],"shapes":[{"shape":{"N":4099},)"
                               R"("label":"tail","set":"tests","passed":true,"negative_control":[],"trials":[{"trial":0,"seed":"0x1",)"
                               R"("passed":true,"failure":"","launch_error":"","outputs":[{"output":"c","passed":true,"elements":4099,)"
                               R"("mismatches":0,"max_abs_error":1e-7,"max_rel_error":2e-7}]}]}],"sanitizer":%2}})")
                    .arg(v, sanitizer);
            answer = say("progress", R"(,"permille":900,"stage":"compute-sanitizer: memcheck, racecheck, initcheck, synccheck")") +
                     "echo '" + failing + "'\n";
            break;
        }
        case Behaviour::BenchOk:
            answer = "echo '" +
                     QStringLiteral(R"({"type":"report","protocol_version":%1,"report":{"schema_version":1,"kind":"performance",)"
                                    R"("verdict":"ok","summary":"fake ok","task":{"name":"vector_add","hash":"h"},)"
                                    R"("candidate":{"file":"naive.cu","source_hash":"s","arch":"sm_90"},"environment":{"gpu":"Fake GPU"},)"
                                    R"("geomean_speedup":1.25,"all_shapes_at_least_1x":true,"shapes":[{"shape":{"N":67108864},)"
                                    R"("label":"64M","set":"benchmarks","candidate":{"median_ms":0.08,"samples":40},)"
                                    R"("baseline":{"median_ms":0.1,"samples":40},"speedup":1.25,"below_floor":false,)"
                                    R"("recheck":{"checked":2,"passed":true,"failure":""},"flags":[]}]}})")
                         .arg(v) +
                     "'\n";
            break;
        }
        // Every line of stdin: "shutdown" ends it, a request is answered and saved for the test.
        const QString script = QStringLiteral("#!/bin/sh\necho '%1'\nwhile read -r line; do\n"
                                              "  case \"$line\" in *'\"type\":\"shutdown\"'*) exit 0;; esac\n"
                                              "  printf '%s\\n' \"$line\" >> '%2'\n%3done\n")
                                   .arg(hello, requestsFile(), answer);
        QFile f(path());
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write the fake runner %s", qPrintable(path()));
        f.write(script.toUtf8());
        f.close();
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }

    /// The script to give as the runner program.
    QString path() const { return m_dir->filePath(QStringLiteral("fake-runner")); }
    /// Where the script appends every request line it received.
    QString requestsFile() const { return m_dir->filePath(QStringLiteral("requests.jsonl")); }
    /// The request lines received so far.
    QStringList requests() const
    {
        QFile f(requestsFile());
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
};

/// The bundled vector_add example: the task the fake runner's answers are written for.
inline Task vectorAddTask()
{
    auto t = loadTask(std::string(KF_SOURCE_DIR) + "/resources/examples/vector_add");
    if (!t)
        qFatal("%s", t.error().message().c_str());
    return t.value();
}

} // namespace kf::test
