// Expressions of task.json (grid sizes, shapes, constraints): parsed and evaluated with symbols.
#include "engine/task/Expr.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto e = kf::Expr::parse(text);
    if (!e)
        return 0;
    kf::Env env;
    for (const char* name : {"N", "B", "D", "M", "K"})
        env[name] = kf::Value::integer(4099);
    (void)e->eval(env);
    (void)e->evalInt(env);
    return 0;
}
