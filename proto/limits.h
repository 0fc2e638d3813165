// Upper and lower bounds the validators enforce. They keep every quantity the simulator derives
// (picoseconds and bytes in int64, GPU indices in int32) far from overflow and catch unit mistakes
// (a bandwidth of 2e9 "Gb/s" was meant in bits). docs/file-formats.md lists them.
#ifndef HETSIM_PROTO_LIMITS_H_
#define HETSIM_PROTO_LIMITS_H_

#include <cstdint>

#include "base/time.h"

namespace hetsim::proto::limits {

inline constexpr double kMaxTflops = 1e6;  // per GPU and dtype
inline constexpr double kMaxHbmGib = 1e6;
inline constexpr double kMaxHbmGbytesPerS = 1e7;
inline constexpr double kMinHbmGbytesPerS = 1;  // 1 GB/s: slower memory overflows int64 ps (1e-320: exit 134)
// A host's fill or pageable copy (Plan.boundary_host_rebuild's rates): no host is slower than 1 GB/s.
inline constexpr double kMinHostGbytesPerS = 1;
// 0.1 TFLOP/s, below the first CUDA GPU's (GeForce 8800 GTX, 2006: 0.35 FP32); a peak of 1e-320 made
// every pass inf.
inline constexpr double kMinTflops = 0.1;
// The smallest share of a GPU's datasheet rate a card is taken to sustain (max_efficiency,
// sustained_clock_fraction, hbm_efficiency, unfused_softmax_speed): 1,000 times slower is no GPU's, and a
// share near 0 divides a time into inf or past int64 ps (hbm_efficiency 1e-320: an event scheduled before
// now, exit 134; unfused_softmax_speed 1e-320: passes of -9e9 ms, exit 0).
inline constexpr double kMinRateShare = 1e-3;
inline constexpr double kMinBandwidthGbps = 0.01;  // 10 Mb/s: slower links overflow int64 ps
inline constexpr double kMaxBandwidthGbps = 1e7;
inline constexpr int64_t kMaxLatencyNs = 1'000'000'000'000;  // 1000 s
inline constexpr uint32_t kMaxGpusPerNode = 1024;
inline constexpr uint32_t kMaxSmCount = 1'000'000;  // streaming multiprocessors per GPU
inline constexpr uint32_t kMaxNodesPerIsland = 100'000;
inline constexpr int64_t kMaxGpus = 1'000'000;  // whole cluster
// What proto::ResolveCluster refuses besides the validator's limits: latencies above one second are
// certainly typos and keep the topology's route weights (picoseconds x 1024 per hop) in int64; global
// GPU ids are int32, and a million GPUs is far beyond any cluster the simulator targets.
inline constexpr int64_t kMaxRouteLatencyNs = 1'000'000'000;
inline constexpr int64_t kMaxTopologyGpus = 1 << 20;
inline constexpr uint32_t kMaxNicsPerNode = 64;
inline constexpr uint32_t kMaxSockets = 64;  // CPU sockets of a node (NodeType.pcie)
inline constexpr uint32_t kMaxLinkCount = 1024;
inline constexpr double kMaxOversubscription = 1024;

inline constexpr uint32_t kMaxTransformerBlocks = 100'000;
inline constexpr uint64_t kMaxHiddenSize = 1'000'000;
inline constexpr uint64_t kMaxFfnHiddenSize = 10'000'000;
inline constexpr uint64_t kMaxSeqLength = 10'000'000;
inline constexpr uint64_t kMaxVocabSize = 100'000'000;
inline constexpr uint32_t kMaxExperts = 100'000;
inline constexpr int kMaxListLayers = 1'000'000;
inline constexpr double kMaxGflopPerSample = 1e12;
inline constexpr double kMaxParams = 1e15;  // per model; x16 bytes of optimizer state fits int64
inline constexpr double kMaxBytes = 1e15;   // any per-sample or per-microbatch size

inline constexpr uint64_t kMaxGlobalBatch = 1'000'000'000;
inline constexpr uint64_t kMaxMicrobatches = 1'000'000;
inline constexpr uint64_t kMaxPipelineTasks = 4'000'000;  // microbatches x virtual stages: about 1.7 GB of DAG
inline constexpr int kMaxStages = 10'000;
inline constexpr double kMaxMeasuredMs = 1e7;
inline constexpr double kMaxSimulatedPs = TimeToPicosecondsDouble(kMaxSimulatedTime);  // about 46 days
inline constexpr uint32_t kMaxVirtualStages = 1024;
// A parallel degree (tensor, data, expert, context parallel; a mixed stage's replicas): at most the GPUs
// a topology holds (kMaxTopologyGpus). The file's degrees are uint32 and the spec's int, so the
// validator refuses a larger one before the stage rules read it (4294967295 would read as -1).
inline constexpr uint32_t kMaxDegree = 1 << 20;

inline constexpr double kMaxSweepPoints = 1e7;

}  // namespace hetsim::proto::limits

#endif  // HETSIM_PROTO_LIMITS_H_
