// café
__global__ void k() {}
