f vec/na
#define LAUNCH __global__ void fake(
template <typename T, int N = (3 > 2)>
__global__ void __launch_bounds__(256, 2) [[maybe_unused]] scale_rows(T* x) { }
extern "C" __global__ void __attribute__((used)) vector_add(const float* a, float* c, int n);
/* __global__ void commented(int) */ const char* s = "__global__ void str(";
__global__ void ns::qualified(int é) {}
