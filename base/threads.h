// Worker threads, started the one way hetsim starts them: a bounded count, and a system that refuses
// a thread (RLIMIT_NPROC, memory for its stack) slows the work down instead of ending the process.
#ifndef HETSIM_BASE_THREADS_H_
#define HETSIM_BASE_THREADS_H_

#include "absl/functional/function_ref.h"

namespace hetsim {

// The most threads one command starts (`plan --threads`, `sweep --jobs`, the Python calls): far above
// any machine's cores, far below what exhausts a process's thread or memory limits.
inline constexpr int kMaxWorkerThreads = 1024;

// Runs body(t) once for every t in [0, threads), each on a thread of its own, and returns when all have
// returned. Thread 0 is the calling thread. A thread the system refuses to start does not abort: its
// body(t) runs on the calling thread after body(0), so every t runs exactly once and the result is the
// same (only slower). `threads` < 1 runs body(0) alone.
void RunOnThreads(int threads, absl::FunctionRef<void(int)> body);

}  // namespace hetsim

#endif  // HETSIM_BASE_THREADS_H_
