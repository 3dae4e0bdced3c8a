#pragma once
// `kforge runners list|check [NAME…]`: the endpoints of runners.json and whether each one works
// (docs/runners.md).

namespace CLI {
class App;
}

namespace kf::cli {

void addRunnersCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
