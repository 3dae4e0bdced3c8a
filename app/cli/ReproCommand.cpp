#include "ReproCommand.h"
#include "engine/protocol/Verdict.h"

#include "ExitCodes.h"
#include "RunnerSession.h"
#include "engine/compile/Compiler.h"
#include "engine/core/Files.h"
#include "engine/repro/Repro.h"

#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace kf::cli {

namespace {

// The first failing trial of a report that has its tensors saved, with its case folder.
const protocol::Trial* firstSavedCase(const protocol::RunReport& report, fs::path& caseDir, std::string& skipped)
{
    if (!report.verify())
        return nullptr;
    const std::string& dumpDir = report.header().dumpDir;
    for (const protocol::CorrectnessShape& s : report.verify()->shapes)
        for (const protocol::Trial& t : s.trials) {
            if (t.passed)
                continue;
            if (!t.caseDir.empty() && !dumpDir.empty()) {
                caseDir = fs::path(dumpDir) / t.caseDir;
                return &t;
            }
            if (skipped.empty())
                skipped = t.caseSkipped.empty() ? "the runner saved no tensors for it" : t.caseSkipped;
        }
    return nullptr;
}

} // namespace

bool exportFirstCase(const protocol::RunReport& report, const Task& task, const std::string& bundleDir)
{
    fs::path caseDir;
    std::string skipped;
    if (!firstSavedCase(report, caseDir, skipped)) {
        if (report.header().passed())
            std::cerr << "kforge: nothing to export: every shape passed\n";
        else
            std::cerr << "kforge: no repro bundle: " << (skipped.empty() ? "no failing trial was saved" : skipped) << '\n';
        return false;
    }
    auto bundle = exportRepro(caseDir, task, bundleDir);
    if (!bundle) {
        std::cerr << "kforge: " << bundle.error().message() << '\n';
        return false;
    }
    std::cerr << "repro bundle: " << bundle.value().string() << "\n  re-run it with: kforge verify --repro "
              << bundle.value().string() << '\n';
    return true;
}

int runRepro(const RunArgs& a)
{
    auto bundle = loadRepro(a.repro);
    if (!bundle)
        return fail(bundle.error(), kExitUsage);
    const ReproBundle& b = bundle.value();
    const Candidate* candidate = b.task.findCandidate(b.kase.candidateFile);
    std::optional<std::string> source;
    if (!a.candidateSource.empty()) {
        auto bytes = readFileBytes(a.candidateSource, kMaxSourceBytes);
        if (!bytes)
            return fail(bytes.error(), kExitUsage);
        source = std::move(bytes.value());
    }
    std::error_code ec;
    const fs::path inputs = fs::absolute(b.caseDir / "inputs", ec);

    std::unique_ptr<RunnerSession> session;
    if (auto failed = startRunner(a, session))
        return *failed;
    RunSettings s;
    s.onlyShapes = {b.kase.shape};
    s.setName = "repro";
    s.trials = 1;
    s.seed = protocol::parseSeed(b.kase.seed);
    s.firstTrial = b.kase.trial;
    s.samples = a.samples;
    s.launchTimeoutMs = a.launchTimeoutMs;
    s.inputsDir = inputs.string();
    // The re-run's tensors stay with the bundle, so a fixed and a broken run sit side by side.
    s.dumpDir = newRunDumpDir(b.task.name, b.kase.candidateFile, fs::absolute(b.dir, ec) / "reruns").string();
    if (session->arch() != b.kase.arch && !b.kase.arch.empty())
        std::cerr << "note: the case failed on " << b.kase.arch << "; this GPU is " << session->arch()
                  << ", so the candidate is compiled for it\n";
    const std::string label = b.task.name + "/" + candidate->file + " (repro" + (source ? ", edited source" : "") + ")";
    auto report = session->verify(b.task, *candidate, s, label, source);
    if (!report) {
        std::cerr << "kforge: " << (session->cancelled() ? std::string("cancelled") : report.error().message()) << '\n';
        return session->cancelled() ? kExitInterrupted : kExitFailed;
    }
    protocol::RunReport& r = report.value();
    const protocol::Trial* trial = nullptr;
    if (r.verify())
        for (const protocol::CorrectnessShape& sh : r.verify()->shapes)
            for (const protocol::Trial& t : sh.trials)
                trial = trial ? trial : &t;
    if (!trial) {
        if (!a.json)
            printVerifyReport(std::cout, r, true);
        else
            std::cout << r.document().dump(2) << '\n';
        return r.isError() ? kExitEnvironment : kExitFailed;
    }
    fs::path rerunCase;
    if (!trial->caseDir.empty())
        rerunCase = fs::path(r.header().dumpDir) / trial->caseDir;
    auto cmp = compareReproduction(b, *trial, rerunCase);
    if (!cmp)
        return fail(cmp.error(), kExitEnvironment);
    nlohmann::json out = r.document();
    out["repro"] = toJson(cmp.value());
    out["repro"]["bundle"] = fs::absolute(b.dir, ec).string();
    if (a.json) {
        std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    } else {
        printVerifyReport(std::cout, r, true);
        std::cout << "  repro: " << cmp->sentence << '\n';
        if (!rerunCase.empty())
            std::cout << "  tensors of the re-run: " << rerunCase.string() << '\n';
    }
    return r.header().passed() ? kExitOk : kExitFailed;
}

std::optional<int> startRunner(const RunArgs& a, std::unique_ptr<RunnerSession>& session)
{
    std::optional<Endpoint> endpoint;
    if (auto rc = resolveEndpointOrExit(a.endpoint, endpoint))
        return rc;
    session = std::make_unique<RunnerSession>(a.runnerPath, a.arch, endpoint);
    return session->start();
}

} // namespace kf::cli
