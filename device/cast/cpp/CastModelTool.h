#pragma once
// `kforge-cast model ...`: a package's TorchScript model run with and without its kernels
// (CastModelTool.cpp). `rest` is the command line after the program name, "model" first.
#include <string>
#include <vector>

int runModel(const std::vector<std::string>& rest);
