// The symmetric heap's memory: one device allocation per rank, mapped into every
// rank's address space. Threads of one process share pointers directly (peer access
// enabled); separate processes exchange IPC handles (CUDA IPC) through the bootstrap.
#pragma once

#include <cstddef>
#include <vector>

namespace iris {

class Bootstrap;

class SymmetricHeap {
 public:
  // Collective. Allocates `bytes` on the current context's device, zeroes it, and maps
  // every rank's heap. `devices` are the device ordinals of all ranks.
  SymmetricHeap(Bootstrap& boot, std::size_t bytes, const std::vector<int>& devices);
  ~SymmetricHeap();
  SymmetricHeap(const SymmetricHeap&) = delete;
  SymmetricHeap& operator=(const SymmetricHeap&) = delete;

  char* base(int rank) const { return bases_[static_cast<std::size_t>(rank)]; }
  char* local_base() const { return local_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  char* local_ = nullptr;
  std::vector<char*> bases_;
  std::vector<char*> ipc_opened_;  // peers' heaps opened through IPC (closed at exit)
  std::vector<int> retained_peer_devices_;  // peers' primary contexts retained for peer access
};

}  // namespace iris
