// Small standalone programs that each carry one defect compute-sanitizer should find
// (docs/runners.md will cite what each tool reported). Built with nvcc -lineinfo by probe.sh.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 3; } } while (0)
