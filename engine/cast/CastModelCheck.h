#pragma once
// Internal to engine/cast: the check of one model entry of a schema 2 manifest
// (CastModelCheck.cpp), called by checkPackage, and what the op and model checks share. Throws
// kf::json::SchemaError.

#include "engine/cast/CastPackage.h"
#include "engine/core/JsonReader.h"

#include <set>
#include <string>

namespace kf::cast {

/// A path the manifest names at `p`, which must be a file of the package.
std::string needFile(const std::set<std::string, std::less<>>& files, const nlohmann::json& v, const std::string& p);

/// The entry's "name": an identifier (else "\"<name>\" <notIdentifier>") not yet in `names`
/// (else "two <kind> are named ..."); added to it.
std::string newName(kf::json::Object& o, std::set<std::string, std::less<>>& names, const std::string& notIdentifier,
                    const char* kind);

PackageModel checkModel(const nlohmann::json& m, const std::string& ptr, const Archive& archive,
                        const std::set<std::string, std::less<>>& files, const std::set<std::string, std::less<>>& opNames,
                        std::set<std::string, std::less<>>& modelNames, const std::string& origin);

} // namespace kf::cast
