#include "proto/pipeline_plans.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"

namespace hetsim::proto {

uint64_t PipelineMicroBatchSize(const hetsim::v1::Plan& plan, const hetsim::v1::Pipeline& pipeline) {
  return pipeline.micro_batch_size() > 0 ? pipeline.micro_batch_size() : plan.micro_batch_size();
}

hetsim::v1::Plan PipelinePlan(const hetsim::v1::Plan& plan, int p) {
  const hetsim::v1::Pipeline& pipeline = plan.pipelines(p);
  // Every field but the pipelines and the prediction: copying the whole plan and clearing them made a
  // plan of n pipelines cost n^2 (10,000 pipelines: over a minute in validation alone).
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  plan.GetReflection()->ListFields(plan, &fields);
  google::protobuf::FieldMask mask;
  for (const google::protobuf::FieldDescriptor* f : fields) {
    if (f->number() != hetsim::v1::Plan::kPipelinesFieldNumber &&
        f->number() != hetsim::v1::Plan::kPredictionFieldNumber) {
      mask.add_paths(f->name());
    }
  }
  hetsim::v1::Plan out;
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(plan, mask, {}, &out);
  *out.mutable_stages() = pipeline.stages();
  out.set_global_batch_size(pipeline.batch_share());
  out.set_micro_batch_size(PipelineMicroBatchSize(plan, pipeline));
  if (pipeline.context_parallel() > 0) out.set_context_parallel(pipeline.context_parallel());
  return out;
}

std::string PipelineFieldPath(int p, absl::string_view path, bool own_context_parallel) {
  const absl::string_view top = path.substr(0, path.find_first_of(".["));
  const std::string at = absl::StrCat("pipelines[", p, "].");
  if (top == "global_batch_size") return absl::StrCat(at, "batch_share", path.substr(top.size()));
  if (top == "stages" || top == "micro_batch_size") return absl::StrCat(at, path);
  if (top == "context_parallel" && own_context_parallel) return absl::StrCat(at, path);
  return std::string(path);
}

absl::Status RequireOnePipeline(const hetsim::v1::Plan& plan, absl::string_view plan_file, absl::string_view what,
                                absl::string_view why) {
  if (plan.pipelines().empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(plan_file, ": pipelines: ", what, " takes a plan of one pipeline: ", why,
                   "; a plan of pipelines of different shapes runs with `hetsim run`, `hetsim check`, "
                   "`hetsim validate` and `hetsim export chakra`"));
}

}  // namespace hetsim::proto
