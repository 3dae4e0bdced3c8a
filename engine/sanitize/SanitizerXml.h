#pragma once
// Reading compute-sanitizer's XML output (`--xml --save FILE`) into findings. The XML is parsed with
// pugixml; nothing is taken from the tool's text output. Records are read strictly where we rely on
// them (kind, level, what/text, where/func/path/line, who/threadIdx/blockIdx, racecheck's
// source/destination) and leniently otherwise: an element we do not know is ignored, and a record we
// cannot classify becomes kind "other", which still fails the gate.

#include "engine/core/Result.h"
#include "engine/protocol/SanitizerReport.h"

#include <string>
#include <string_view>
#include <vector>

namespace kf::sanitize {

struct ParsedXml {
    std::vector<protocol::SanitizerFinding> findings;   ///< in the file's order
    std::int64_t records = 0;                           ///< <record> elements read
};

/// `tool` is the tool that wrote the file (memcheck, racecheck, initcheck, synccheck): it decides
/// how records are classified. `origin` names the file in errors. Limits: 64 MiB of text, 100 000
/// records; beyond them an Error, as for text that is not XML or whose root is not
/// <ComputeSanitizerOutput>. An empty file is an Error too (the tool always writes the root).
Result<ParsedXml> parseSanitizerXml(std::string_view xml, const std::string& tool, const std::string& origin);

/// Whether a finding concerns one of `kernels`: the tool prints demangled names ("void
/// shift_add<float>(const T1 *, T1 *, int)", "block_sum"), the plan names kernels by their name
/// expression ("shift_add<float>", "block_sum"); a host-side record never matches.
bool findingInKernels(const protocol::SanitizerFinding& f, const std::vector<std::string>& nameExpressions);

} // namespace kf::sanitize
