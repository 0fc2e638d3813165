// `hetsim calibrate LOG... --cluster C --out CALIBRATED [--fit-report FILE] [--island NAME]`: fits the
// cluster's NCCL fabric parameters to nccl-tests logs and writes the calibrated cluster and a fit
// report: flags to a calibrate::CalibrateRequest (service/calibrate/calibrate_command.h), its response to
// text and files.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "service/calibrate/calibrate_command.h"

namespace hetsim::cli {
namespace {

const CommandInfo kCalibrateInfo = {
    "calibrate",
    "hetsim calibrate [LOG...] [--gemm CSV [--gpu-type NAME]] [--iterations CSV] --cluster CLUSTER --out CALIBRATED\n"
    "                 [--fit-report FILE] [--island NAME] [--max-mape PCT] [--accept-poor-fit] [--max-wall-seconds S]\n"
    "                 [--log-ranks N --log-hosts H] [--exact]",
    "Fits the NCCL parameters of CLUSTER (docs/network.md: bandwidth efficiency, launch latency, LL / LL128 /\n"
    "Simple step latencies) to nccl-tests logs as pasted (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
    "sendrecv_perf, alltoall_perf, broadcast_perf; one run per file, with its \"#  Rank\" lines, or\n"
    "--log-ranks N --log-hosts H for a table pasted without them, else the run's own command when it says\n"
    "them (-g, mpirun -np/-npernode, srun -N/-n; the island's GPU is then assumed);\n"
    "markdown, the command line, NCCL's INFO lines and launcher prefixes around it are skipped): single-host\n"
    "logs fit the island's node type, multi-host logs its inter-node fabric, by least squares on the relative time "
    "residual\n"
    "of every row (out-of-place time). Each log runs on the first hosts x GPUs of the island (--island,\n"
    "default the first). Writes CALIBRATED (the cluster with the fitted nccl fields; format from the extension) and,\n"
    "with --fit-report, the parameters and every point's residual with the MAPE. --gemm CSV (columns m, n,\n"
    "k, dtype, time_us) fits the GPU type's max_efficiency, tile_overhead_k and kernel_launch_us\n"
    "(docs/hardware.md); --iterations CSV (columns plan, time_ms; plans relative to the CSV) moves every\n"
    "GPU type's GEMM efficiency and pass and iteration overheads towards measured iteration times, as far\n"
    "as the runs agree (the presets are the prior; docs/validation.md), each run simulated at the fidelity\n"
    "`hetsim run` chooses (--exact: in full, whatever its size). A malformed log, one of another GPU or more\n"
    "hosts than the island has, or one showing NVLink SHARP / CollNet exits 2 naming the file and line (a\n"
    "one-host all-reduce, all-gather or reduce-scatter showing NVLink SHARP is fitted as --algo nvls, its\n"
    "node type given nvlink_sharp and its own nvls_bandwidth_efficiency; a multi-host all-reduce showing\n"
    "CollNet as --algo collnet, its island given infiniband_sharp; one with NCCL_ALGO=NVLSTree or\n"
    "CollNetChain as --algo nvlstree or collnetchain, fitting the island's network); so\n"
    "does a poor fit (a parameter at its bound or outside what a fabric does, MAPE above --max-mape, default\n"
    "15) unless --accept-poor-fit; nothing is written then. Warnings go to stderr and the fit report."};

// Every fitted parameter, before -> after, on stdout.
void PrintFittedParameters(const std::vector<calibrate::SourceFit>& fits) {
  for (const calibrate::SourceFit& f : fits) {
    for (const calibrate::FittedParameter& p : f.parameters) {
      std::printf("  %s: %.6g -> %.6g\n", p.field.c_str(), p.before, p.after);
    }
  }
}

// Fits `request` and writes the calibrated cluster and the fit report (both or neither); the outputs are
// checked before the fit (seconds to minutes): one over an input or in a missing folder.
absl::Status CalibrateAndWrite(const calibrate::CalibrateRequest& request, const std::string& out_path,
                               const std::string& report_path) {
  HETSIM_ASSIGN_OR_RETURN(calibrate::LoadedCalibration loaded, calibrate::LoadCalibration(request));
  proto::OutputFiles outputs(loaded.input_files);
  for (const std::string* path : {&out_path, &report_path}) {
    if (!path->empty()) HETSIM_RETURN_IF_ERROR(outputs.Check(*path));
  }
  HETSIM_ASSIGN_OR_RETURN(calibrate::CalibrateResponse fitted, calibrate::FitCalibration(std::move(loaded), request));
  for (const std::string& w : fitted.warnings) std::fprintf(stderr, "hetsim calibrate: warning: %s\n", w.c_str());
  HETSIM_RETURN_IF_ERROR(fitted.refusal);
  HETSIM_RETURN_IF_ERROR(outputs.Add(report_path, fitted.fit_report));
  HETSIM_RETURN_IF_ERROR(outputs.AddMessage(out_path, fitted.cluster));
  HETSIM_RETURN_IF_ERROR(outputs.Commit());
  std::printf("calibrated %s -> %s: MAPE %.2f %% over %zu logs, %zu GEMM and %zu iteration files\n",
              request.cluster_path.c_str(), out_path.c_str(), fitted.mape_percent, request.logs.size(),
              request.gemms.size(), request.iterations.size());
  PrintFittedParameters(fitted.fits);
  return absl::OkStatus();
}

int Calibrate(const Args& args) {
  po::options_description options("options");
  calibrate::CalibrateRequest r;
  std::string out_path, report_path;
  options.add_options()("cluster,c", po::value(&r.cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "out,o", po::value(&out_path)->required()->value_name("CALIBRATED"), "calibrated cluster to write")(
      "fit-report", po::value(&report_path)->value_name("FILE"), "fit report to write")(
      "island", po::value(&r.island)->value_name("NAME"), "island the logs ran on (default: the first)")(
      "gemm", po::value(&r.gemms)->value_name("CSV"), "GEMM timings m,n,k,dtype,time_us (repeatable)")(
      "iterations", po::value(&r.iterations)->value_name("CSV"), "measured iterations plan,time_ms (repeatable)")(
      "gpu-type", po::value(&r.gpu_type)->value_name("NAME"), "GPU type the GEMMs ran on (default: the first)")(
      "log", po::value(&r.logs)->value_name("LOG"), "nccl-tests output log (repeatable)")(
      "max-mape", po::value(&r.max_mape)->value_name("PCT"),
      "largest MAPE of the nccl-tests and GEMM fits, percent (default 15)")(
      "accept-poor-fit", po::bool_switch(&r.accept_poor_fit), "write a poor fit anyway, its problems as warnings")(
      "log-ranks", po::value(&r.log_shape.ranks)->value_name("N"), "GPUs of logs pasted without their Rank lines")(
      "log-hosts", po::value(&r.log_shape.hosts)->value_name("H"), "hosts of logs pasted without their Rank lines")(
      "max-wall-seconds", po::value(&r.max_wall_seconds)->value_name("S"),
      "stop and exit 2 after S seconds (0 = none)")("exact", po::bool_switch(&r.exact),
                                                    "simulate every --iterations run in full, whatever its size");
  po::positional_options_description positional;
  positional.add("log", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kCalibrateInfo, args, options, positional, &vm)) return *exit;
  if (auto exit = CheckRunLimitFlags(kCalibrateInfo, 0, r.max_wall_seconds)) return *exit;
  std::vector<std::string> inputs = r.logs;
  inputs.insert(inputs.end(), r.gemms.begin(), r.gemms.end());
  inputs.insert(inputs.end(), r.iterations.begin(), r.iterations.end());
  if (auto exit = CheckGivenOnce(kCalibrateInfo, inputs)) return *exit;
  const WallLimit wall_limit(r.max_wall_seconds);  // every fit's simulations check it
  const WallLimitScope wall_scope(wall_limit);
  if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(out_path); !f.ok()) {
    return ReportFailure(kCalibrateInfo, f.status());
  }
  if (absl::Status s = calibrate::CheckLogShape(r.log_shape); !s.ok()) return UsageError(kCalibrateInfo, s.message());
  r.output_name = out_path;
  if (absl::Status s = CalibrateAndWrite(r, out_path, report_path); !s.ok()) return ReportFailure(kCalibrateInfo, s);
  return kExitOk;
}

}  // namespace

int RunCalibrate(const Args& args) {
  return RunGuarded(kCalibrateInfo, [&] { return Calibrate(args); });
}

}  // namespace hetsim::cli
