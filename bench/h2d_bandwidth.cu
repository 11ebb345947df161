// Host-to-device copy bandwidth from pinned memory, the ceiling of the CUDA streaming backend for
// codec none. Prints "h2d_gbps <value>" (GB/s = 1e9 bytes/s); exits 2 without a device.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  const size_t bytes = size_t{256} << 20;
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "h2d_bandwidth: no CUDA device\n");
    return 2;
  }
  void *host = nullptr, *device = nullptr;
  if (cudaMallocHost(&host, bytes) != cudaSuccess || cudaMalloc(&device, bytes) != cudaSuccess) {
    std::fprintf(stderr, "h2d_bandwidth: allocation failed\n");
    return 1;
  }
  std::fill_n(static_cast<char*>(host), bytes, 1);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);  // warm-up
  std::vector<float> gbps;
  for (int i = 0; i < repeats; ++i) {
    cudaEventRecord(start);
    cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    gbps.push_back(static_cast<float>(bytes) / 1e6f / ms);
  }
  std::sort(gbps.begin(), gbps.end());
  std::printf("h2d_gbps %.2f\n", gbps[gbps.size() / 2]);
  cudaFreeHost(host);
  cudaFree(device);
  return 0;
}
