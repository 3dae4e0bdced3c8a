// é € 😀
__global__ void k() {}
