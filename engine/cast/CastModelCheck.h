#pragma once
// Internal to engine/cast: the check of one model entry of a schema 2 manifest
// (CastModelCheck.cpp), called by checkPackage. Throws kf::json::SchemaError.

#include "engine/cast/CastPackage.h"

#include <set>
#include <string>

namespace kf::cast {

PackageModel checkModel(const nlohmann::json& m, const std::string& ptr, const Archive& archive,
                        const std::set<std::string, std::less<>>& files, const std::set<std::string, std::less<>>& opNames,
                        std::set<std::string, std::less<>>& modelNames, const std::string& origin);

} // namespace kf::cast
