// `kforge tune TASK [--candidate F] [--budget-s N]`: the search of engine/tune/Tuner.h on the
// runner, its table, the winner written back as a new candidate and its full verify + bench
// (against eager and torch.compile) as the evidence.
#include "TuneCommand.h"

#include "ExitCodes.h"
#include "RunnerCommand.h"
#include "RunnerSession.h"
#include "TextTable.h"
#include "engine/core/Files.h"
#include "engine/protocol/Report.h"
#include "engine/tune/Tuner.h"

#include <algorithm>
#include <iostream>
#include <memory>

namespace kf::cli {

namespace {

struct TuneArgs {
    std::string path;
    std::string candidate;
    double budgetS = 120;
    std::vector<std::string> shapes;
    int finalists = 3;
    int eta = 3;
    int trials = 3;
    std::size_t maxPoints = 4096;
    bool allowSpills = false;
    bool noWrite = false;
    bool compileOnly = false;
    bool json = false;
    std::string reportFile;
    std::string runnerPath;
    std::string arch;
    EndpointArgs endpoint;
};

std::string ms(const std::optional<double>& v)
{
    return v ? protocol::formatNumber(*v, 4) : std::string("-");
}

void printTable(std::ostream& out, const tune::Outcome& o)
{
    using A = TextTable::Align;
    TextTable table({{"point", A::Left},
                     {"stage", A::Left},
                     {"regs", A::Right},
                     {"occupancy", A::Right},
                     {"geomean ms", A::Right},
                     {"re-measured ms", A::Right},
                     {"vs eager", A::Right},
                     {"% HBM peak (lowest)", A::Right},
                     {"reason", A::Left}});
    for (const tune::PointResult& p : o.points) {
        const bool built = p.compiled;
        // Before the search (--compile-only) a point that built and can launch is "builds".
        const std::string stage = p.compiled && p.stage == tune::Stage::NotReached && o.cost.benchRuns == 0 && o.cost.verified == 0
                                      ? "builds"
                                      : tune::stageName(p.stage);
        table.addRow({p.point.label(), stage, built ? std::to_string(p.registers) : "-",
                      p.occupancy ? protocol::formatFixed(100 * *p.occupancy, 0) + " %" : "-", ms(p.geomeanMs), ms(p.finalMs),
                      p.speedupEager ? protocol::formatNumber(*p.speedupEager, 3) + "×" : "-",
                      p.pctPeak ? protocol::formatFixed(*p.pctPeak, 1) + " %" : "-", TextTable::truncate(p.reason, 70)});
    }
    table.print(out);
    const tune::Cost& c = o.cost;
    out << "  search: " << c.points << " point(s) of " << o.space.combinations << " combination(s) (" << o.space.excluded
        << " left out by \"where\"" << (o.space.sampledOut ? ", " + std::to_string(o.space.sampledOut) + " sampled out" : "")
        << "); compiled " << c.compiled << ", did not compile " << c.compileFailed << ", pruned " << c.pruned << "; verified "
        << c.verified << " (" << c.verifyFailed << " failed, never timed); timed " << c.timed << " in " << c.benchRuns
        << " bench run(s), " << c.remeasureRuns << " of them the finalists' re-measure\n"
        << "  wall " << protocol::formatFixed(c.wallS, 1) << " s: compile " << protocol::formatFixed(c.compileS, 1) << " s, verify "
        << protocol::formatFixed(c.verifyS, 1) << " s, bench " << protocol::formatFixed(c.benchS, 1) << " s"
        << (c.budgetSpent ? "; the budget ran out before the search ended" : "") << (o.cancelled ? "; cancelled" : "") << '\n';
}

/// The winner's full verify and bench (torch.compile too) from the task as written back.
int evidence(RunnerSession& session, const TuneArgs& a, const std::string& file, nlohmann::json& document)
{
    auto task = loadTaskArgument(a.path, {file});
    if (!task)
        return kExitUsage;
    int code = kExitOk;
    for (RunKind kind : {RunKind::Verify, RunKind::Bench}) {
        RunPlan plan;
        plan.kind = kind;
        plan.candidateFile = file;
        plan.settings.trials = a.trials;
        if (kind == RunKind::Bench) {
            plan.settings.shapes = "benchmarks";
            plan.settings.compileBaseline = true;
        }
        auto r = session.run(*task, plan, file);
        if (!r) {
            std::cerr << "kforge tune: " << r.error().message() << '\n';
            return kExitEnvironment;
        }
        if (!a.json)
            (kind == RunKind::Verify ? printVerifyReport : printBenchReport)(std::cout, r->report, false);
        document["reports"].push_back(r->report.document());
        if (!r->passed())
            code = kExitFailed;
        if (r->cancelled)
            return kExitInterrupted;
    }
    return code;
}

Result<tune::Settings> settingsFor(const TuneArgs& a, const Task& task)
{
    tune::Settings s;
    s.budgetS = a.budgetS;
    s.finalists = a.finalists;
    s.eta = a.eta;
    s.maxPoints = a.maxPoints;
    s.allowSpills = a.allowSpills;
    s.verify.trials = a.trials;
    for (const std::string& text : a.shapes) {
        auto b = parseShapeText(task, text);
        if (!b)
            return Error::failed("read --shapes " + text, b.error().why, "give every symbol, e.g. --shapes \"B=4096,D=8192\"");
        s.shapes.push_back(*b);
    }
    return s;
}

/// The candidate to tune: --candidate, else the task's first with a "tune" block.
std::optional<std::string> chooseCandidate(const TuneArgs& a, const Task& task)
{
    if (!a.candidate.empty())
        return a.candidate;
    for (const Candidate& c : task.candidates)
        if (!c.tune.empty())
            return c.file;
    std::cerr << "kforge tune: " << (task.directory / "task.json").string()
              << ": no candidate has a \"tune\" block; add one (docs/tune.md) or name a candidate with --candidate\n";
    return std::nullopt;
}

/// --compile-only: stage 1 alone, without a GPU: which points build, spill or cannot launch.
int compileOnly(const TuneArgs& a, const Task& task, const std::string& file, const tune::Settings& settings)
{
    const std::string arch = !a.arch.empty() ? a.arch : task.architectures.empty() ? "sm_90" : task.architectures.front();
    auto out = tune::prepare(task, file, arch, settings);
    if (!out) {
        std::cerr << "kforge tune: " << out.error().message() << '\n';
        return kExitUsage;
    }
    ProgressLine line;
    tune::compilePoints(task, *task.findCandidate(file), arch, settings, *out, [&](const tune::Progress& p) {
        line.show("tune: compile " + std::to_string(p.done) + "/" + std::to_string(p.total));
    }, nullptr);
    line.clear();
    if (a.json)
        std::cout << nlohmann::json({{"tune", out->toJson()}}).dump(2) << '\n';
    else
        printTable(std::cout, *out);
    const bool any = std::any_of(out->points.begin(), out->points.end(),
                                 [](const tune::PointResult& p) { return p.compiled && p.stage == tune::Stage::NotReached; });
    if (!any)
        std::cerr << "kforge tune: no point of the space builds and can launch for " << arch << "; the table says why\n";
    return any ? kExitOk : kExitFailed;
}

int runTune(const TuneArgs& a)
{
    auto task = loadTaskArgument(a.path);
    if (!task)
        return kExitUsage;
    auto file = chooseCandidate(a, *task);
    if (!file)
        return kExitUsage;
    auto settings = settingsFor(a, *task);
    if (!settings) {
        std::cerr << "kforge tune: " << settings.error().message() << '\n';
        return kExitUsage;
    }
    if (a.compileOnly)
        return compileOnly(a, *task, *file, *settings);
    std::optional<Endpoint> endpoint;
    if (auto code = resolveEndpointOrExit(a.endpoint, endpoint))
        return *code;
    RunnerSession session(a.runnerPath, a.arch, endpoint);
    if (auto code = session.start())
        return *code;
    const tune::RunFn run = [&](const Task& t, const RunPlan& plan, const CancelToken*) {
        return session.run(t, plan, plan.kind == RunKind::Verify ? "tune: verify" : "tune: time");
    };
    const tune::ProgressFn progress = [&](const tune::Progress& p) {
        session.progress().show("tune: " + p.stage + " " + std::to_string(p.done) + "/" + std::to_string(p.total) + " (" +
                                protocol::formatFixed(p.elapsedS, 0) + " s)" + (p.point ? " " + p.point->point.label() : ""));
    };
    auto outcome = tune::search(*task, *file, session.arch(), *settings, run, progress, &session.cancel());
    session.progress().clear();
    if (!outcome) {
        std::cerr << "kforge tune: " << outcome.error().message() << '\n';
        return outcome.error().file.empty() ? kExitEnvironment : kExitUsage;
    }
    nlohmann::json document = {{"tune", outcome->toJson()}, {"reports", nlohmann::json::array()}};
    if (!a.json)
        printTable(std::cout, *outcome);
    int code = outcome->cancelled ? kExitInterrupted : kExitFailed;
    if (const tune::PointResult* w = outcome->best(); w && !outcome->cancelled) {
        std::cout << (a.json ? "" : "  winner: " + w->point.label() + ", " + ms(w->finalMs) + " ms geomean\n");
        if (!a.noWrite) {
            auto written = tune::writeBack(*task, *file, w->point, tune::winnerDescription(*outcome, *w, "kforge tune"));
            if (!written) {
                std::cerr << "kforge tune: " << written.error().message() << '\n';
                return kExitUsage;
            }
            const std::string newFile = written->filename().string();
            document["written"] = newFile;
            if (!a.json)
                std::cout << "  written as " << written->string() << "; its verify and bench:\n";
            code = evidence(session, a, newFile, document);
        } else {
            code = kExitOk;
        }
    } else if (!outcome->cancelled) {
        std::cerr << "kforge tune: no point passed verify and was timed; the table says why each stopped\n";
    }
    if (a.json)
        std::cout << document.dump(2) << '\n';
    if (!a.reportFile.empty())
        if (auto w = writeFileAtomic(a.reportFile, document.dump(2) + "\n"); !w) {
            std::cerr << "kforge tune: " << w.error().message() << '\n';
            return kExitEnvironment;
        }
    return code;
}

} // namespace

void addTuneCommand(CLI::App& app, int& exitCode)
{
    auto a = std::make_shared<TuneArgs>();
    CLI::App* cmd = app.add_subcommand("tune", "Search a candidate's \"tune\" space on the GPU: verify every point before "
                                               "timing it, halve, re-measure the finalists, write the winner back");
    cmd->add_option("task", a->path, "task folder or task.json")->required();
    cmd->add_option("--candidate", a->candidate, "the candidate to tune (default: the first with a \"tune\" block)");
    cmd->add_option("--budget-s", a->budgetS, "wall-clock budget of the search, re-measure included")->check(CLI::PositiveNumber);
    cmd->add_option("--shapes", a->shapes, "time on this shape instead of the benchmark shapes (repeatable): \"B=4096,D=8192\"")
        ->allow_extra_args(false);
    cmd->add_option("--finalists", a->finalists, "points re-measured from scratch at the end")->check(CLI::Range(1, 16));
    cmd->add_option("--eta", a->eta, "each halving round keeps the best 1 in this many")->check(CLI::Range(2, 16));
    cmd->add_option("--trials", a->trials, "verify trials per test shape, for every point")->check(CLI::Range(1, 100));
    cmd->add_option("--max-points", a->maxPoints, "an even sample of a larger space")->check(CLI::Range(1, 1000000));
    cmd->add_flag("--allow-spills", a->allowSpills, "keep points whose kernels spill registers");
    cmd->add_flag("--no-write", a->noWrite, "do not add the winner to the task");
    cmd->add_flag("--compile-only", a->compileOnly,
                  "only compile every point (for --arch, default the task's first architecture) and show which build, "
                  "spill or cannot launch; needs no GPU");
    cmd->add_flag("--json", a->json, "print the search and the winner's reports as JSON");
    cmd->add_option("--report", a->reportFile, "also write that JSON to this file (atomically)");
    cmd->add_option("--arch", a->arch, "compile for this architecture instead of the runner GPU's");
    addRunnerOptions(cmd, &a->runnerPath, &a->endpoint);
    cmd->callback([a, &exitCode] { exitCode = runTune(*a); });
}

} // namespace kf::cli
