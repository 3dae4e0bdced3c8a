#include "ReproCommand.h"

#include "ExitCodes.h"
#include "ReportText.h"
#include "RunnerSession.h"
#include "engine/core/Files.h"
#include "engine/repro/Repro.h"

#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli {

namespace {

// The first failing trial of a report that has its tensors saved, with its case folder.
const json* firstSavedCase(const json& report, fs::path& caseDir, std::string& skipped)
{
    const std::string dumpDir = stringField(report, "dump_dir");
    for (const json& s : field(report, "shapes"))
        for (const json& t : field(s, "trials")) {
            if (field(t, "passed") != json(false))
                continue;
            if (std::string c = stringField(t, "case"); !c.empty() && !dumpDir.empty()) {
                caseDir = fs::path(dumpDir) / c;
                return &t;
            }
            if (skipped.empty())
                skipped = stringField(t, "case_skipped", "the runner saved no tensors for it");
        }
    return nullptr;
}

} // namespace

bool exportFirstCase(const json& report, const Task& task, const std::string& bundleDir)
{
    fs::path caseDir;
    std::string skipped;
    if (!firstSavedCase(report, caseDir, skipped)) {
        if (stringField(report, "verdict") == "pass")
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
    if (!bundle) {
        std::cerr << "kforge: " << bundle.error().message() << '\n';
        return kExitUsage;
    }
    const ReproBundle& b = bundle.value();
    const Candidate* candidate = b.task.findCandidate(b.kase.candidateFile);
    std::optional<std::string> source;
    if (!a.candidateSource.empty()) {
        auto bytes = readFileBytes(a.candidateSource);
        if (!bytes) {
            std::cerr << "kforge: " << bytes.error().message() << '\n';
            return kExitUsage;
        }
        source = std::move(bytes.value());
    }
    std::error_code ec;
    const fs::path inputs = fs::absolute(b.caseDir / "inputs", ec);

    RunnerSession session(a.runnerPath);
    if (auto failed = session.start(a.arch))
        return *failed;
    RunSettings s;
    s.onlyShapes = {b.kase.shape};
    s.setName = "repro";
    s.trials = 1;
    s.seed = parseSeed(b.kase.seed);
    s.firstTrial = b.kase.trial;
    s.samples = a.samples;
    s.launchTimeoutMs = a.launchTimeoutMs;
    s.inputsDir = inputs.string();
    // The re-run's tensors stay with the bundle, so a fixed and a broken run sit side by side.
    s.dumpDir = newRunDumpDir(b.task.name, b.kase.candidateFile, fs::absolute(b.dir, ec) / "reruns").string();
    if (std::string missing = missingRunnerFeature(session.hello(), s); !missing.empty()) {
        std::cerr << "kforge: this kforge-runner cannot replay a bundle (it lacks \"" << missing << "\"); rebuild it\n";
        return kExitEnvironment;
    }
    if (session.arch() != b.kase.arch && !b.kase.arch.empty())
        std::cerr << "note: the case failed on " << b.kase.arch << "; this GPU is " << session.arch()
                  << ", so the candidate is compiled for it\n";
    const std::string label = b.task.name + "/" + candidate->file + " (repro" + (source ? ", edited source" : "") + ")";
    auto report = session.verify(b.task, *candidate, s, label, source);
    if (!report) {
        std::cerr << "kforge: " << (session.cancelled() ? std::string("cancelled") : report.error().message()) << '\n';
        return session.cancelled() ? kExitInterrupted : kExitFailed;
    }
    json& r = report.value();
    const json* trial = nullptr;
    for (const json& sh : field(r, "shapes"))
        for (const json& t : field(sh, "trials"))
            trial = trial ? trial : &t;
    if (!trial) {
        if (!a.json)
            printVerifyReport(std::cout, r, true);
        else
            std::cout << r.dump(2) << '\n';
        return stringField(r, "verdict") == "error" ? kExitEnvironment : kExitFailed;
    }
    fs::path rerunCase;
    if (std::string c = stringField(*trial, "case"); !c.empty())
        rerunCase = fs::path(stringField(r, "dump_dir")) / c;
    auto cmp = compareReproduction(b, *trial, rerunCase);
    if (!cmp) {
        std::cerr << "kforge: " << cmp.error().message() << '\n';
        return kExitEnvironment;
    }
    r["repro"] = toJson(cmp.value());
    r["repro"]["bundle"] = fs::absolute(b.dir, ec).string();
    if (a.json) {
        std::cout << r.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    } else {
        printVerifyReport(std::cout, r, true);
        std::cout << "  repro: " << cmp->sentence << '\n';
        if (!rerunCase.empty())
            std::cout << "  tensors of the re-run: " << rerunCase.string() << '\n';
    }
    return stringField(r, "verdict") == "pass" ? kExitOk : kExitFailed;
}

} // namespace kf::cli
