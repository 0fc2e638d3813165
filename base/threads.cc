#include "base/threads.h"

#include <system_error>
#include <thread>
#include <vector>

namespace hetsim {

void RunOnThreads(int threads, absl::FunctionRef<void(int)> body) {
  std::vector<std::thread> started;
  std::vector<int> refused;
  for (int t = 1; t < threads; ++t) {
    try {
      started.emplace_back([body, t] { body(t); });
    } catch (const std::system_error&) {  // EAGAIN: no more threads for this process or no memory for a stack
      refused.push_back(t);
    }
  }
  body(0);
  for (int t : refused) body(t);
  for (std::thread& thread : started) thread.join();
}

}  // namespace hetsim
