// service/evaluation/prediction_check and prediction_set on hand-made plans and reports: every expected value
// is computed in the comments from the numbers in the test.
#include <catch2/catch.hpp>

#include <string>

#include "service/evaluation/prediction_check.h"
#include "service/evaluation/prediction_set.h"
#include "service/evaluation/validation_text.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::evaluation::ComparePrediction;
using hetsim::evaluation::PredictionChartSvg;
using hetsim::evaluation::SummarizePredictions;

// A two-stage simulated report: stage 0 computes 40 ms, exposes 10 ms of communication, idles 20 ms,
// syncs gradients 6 ms + 4 ms optimizer; stage 1 computes 60, exposes 0, idles 16, syncs 2 + 2.
v1::Report TwoStageReport() {
  v1::Report r;
  r.set_iteration_time_ms(80);
  v1::StageReport* s0 = r.add_stages();
  s0->set_forward_ms_per_microbatch(1);
  s0->set_backward_ms_per_microbatch(4);
  s0->set_compute_busy_ms(40);
  s0->set_exposed_comm_ms(10);
  s0->set_idle_ms(20);
  s0->set_grad_sync_ms(6);
  s0->set_optimizer_ms(4);
  s0->set_peak_memory_gib(20);
  v1::StageReport* s1 = r.add_stages();
  s1->set_forward_ms_per_microbatch(2.5);
  s1->set_backward_ms_per_microbatch(5);
  s1->set_compute_busy_ms(60);
  s1->set_exposed_comm_ms(0);
  s1->set_idle_ms(16);
  s1->set_grad_sync_ms(2);
  s1->set_optimizer_ms(2);
  v1::BoundaryReport* b = r.add_boundaries();
  b->set_from_stage(0);
  b->set_to_stage(1);
  b->set_transfer_ms(2);
  return r;
}

TEST_CASE("each predicted quantity against its simulated value", "[evaluation]") {
  v1::Plan plan;
  plan.set_name("p");
  v1::PlanPrediction& pred = *plan.mutable_prediction();
  pred.set_planner("test");
  pred.set_iteration_time_ms(60);  // -25%
  v1::PredictedStage* s0 = pred.add_stages();
  s0->set_forward_ms(1.2);          // +20%
  s0->set_backward_ms(2.4);         // -40%
  s0->set_boundary_transfer_ms(0);  // -100%
  s0->set_peak_memory_gib(15);      // -25%
  pred.add_stages();                // stage 1: nothing predicted
  const v1::PlanValidation v = ComparePrediction(plan, 8, TwoStageReport(), "p.pbtxt");
  REQUIRE(v.errors_size() == 5);
  CHECK(v.errors(0).quantity() == "prediction.iteration_time_ms");
  CHECK(v.errors(0).error_percent() == Approx(-25));
  CHECK(v.errors(1).quantity() == "prediction.stages[0].forward_ms");
  CHECK(v.errors(1).error_percent() == Approx(20));
  CHECK(v.errors(2).error_percent() == Approx(-40));
  CHECK(v.errors(3).quantity() == "prediction.stages[0].boundary_transfer_ms");
  CHECK(v.errors(3).simulated() == 2);
  CHECK(v.errors(3).error_percent() == Approx(-100));
  CHECK(v.errors(4).unit() == "GiB");
  CHECK(v.errors(4).error_percent() == Approx(-25));
  // Stage 0's compute defaults to 8 microbatches x (1.2 + 2.4) = 28.8 ms; the other three terms are
  // absent: no remainder (it needs exactly one missing), so compute is the only term and the wrong one.
  REQUIRE(v.stages_size() == 2);
  REQUIRE(v.stages(0).terms_size() == 1);
  CHECK(v.stages(0).terms(0).predicted() == Approx(28.8));
  CHECK(v.stages(0).wrong_term() == "compute");
  CHECK(v.stages(0).wrong_term_error_ms() == Approx(28.8 - 40));
  CHECK(v.stages(1).terms_size() == 0);
  CHECK(v.stages(1).wrong_term().empty());
  CHECK(v.diagnosis() == "stage 0: compute under-predicted by 11.200 ms (predicted 28.800, simulated 40.000)");
}

TEST_CASE("one missing stage term is the remainder of the iteration", "[evaluation]") {
  v1::Plan plan;
  v1::PlanPrediction& pred = *plan.mutable_prediction();
  pred.set_iteration_time_ms(70);
  for (int i = 0; i < 2; ++i) {
    v1::PredictedStage* s = pred.add_stages();
    s->set_compute_ms(38);
    s->set_exposed_comm_ms(0);
    s->set_grad_sync_ms(9);
  }
  const v1::PlanValidation v = ComparePrediction(plan, 8, TwoStageReport(), "p");
  // Bubble = 70 - 38 - 0 - 9 = 23 on both stages. Stage 0: compute -2, exposed -10, bubble +3, sync -1:
  // exposed communication is the wrong term. Stage 1: compute -22, exposed 0, bubble +7, sync +5.
  REQUIRE(v.stages(0).terms_size() == 4);
  CHECK(v.stages(0).terms(2).quantity() == "bubble");
  CHECK(v.stages(0).terms(2).predicted() == Approx(23));
  CHECK(v.stages(0).terms(3).simulated() == Approx(10));  // grad sync 6 + optimizer 4
  CHECK(v.stages(0).wrong_term() == "exposed_comm");
  CHECK(v.stages(0).wrong_term_error_ms() == Approx(-10));
  CHECK(v.stages(1).wrong_term() == "compute");
  CHECK(v.stages(1).wrong_term_error_ms() == Approx(-22));
  CHECK(v.diagnosis() == "stage 1: compute under-predicted by 22.000 ms (predicted 38.000, simulated 60.000)");
}

v1::PlanValidation Point(const std::string& name, double predicted, double simulated) {
  v1::PlanValidation p;
  p.set_plan_name(name);
  p.set_predicted_iteration_ms(predicted);
  p.set_simulated_iteration_ms(simulated);
  v1::QuantityError* e = p.add_errors();
  e->set_quantity("prediction.iteration_time_ms");
  e->set_predicted(predicted);
  e->set_simulated(simulated);
  e->set_error_percent((predicted - simulated) / simulated * 100);
  return p;
}

TEST_CASE("a set: errors, rankings, the planner's pick and the misranked pairs", "[evaluation]") {
  v1::PlanValidationReport r;
  *r.add_plans() = Point("a", 10, 20);  // -50%
  *r.add_plans() = Point("b", 12, 12);  //   0%
  *r.add_plans() = Point("c", 15, 10);  // +50%
  *r.add_plans() = Point("d", 30, 40);  // -25%
  SummarizePredictions(&r);
  CHECK(r.mape_percent() == Approx((50 + 0 + 50 + 25) / 4.0));
  CHECK(r.max_abs_error_percent() == Approx(50));
  CHECK(r.worst_plan() == "a");
  // Predicted order a < b < c < d, simulated c < b < a < d. Pairs: (a,b) D, (a,c) D, (a,d) C, (b,c) D,
  // (b,d) C, (c,d) C: tau = (3 - 3) / 6 = 0. Ranks predicted (1,2,3,4), simulated (3,2,1,4):
  // sum d^2 = 4 + 0 + 4 + 0 = 8, rho = 1 - 6 x 8 / 60 = 0.2.
  CHECK(r.kendall_tau() == Approx(0.0));
  CHECK(r.spearman_rho() == Approx(0.2));
  CHECK(r.predicted_best() == "a");
  CHECK(r.simulated_best() == "c");
  CHECK_FALSE(r.best_matches());
  CHECK(r.best_regret_percent() == Approx(100));  // a simulates 20 ms, c 10 ms
  CHECK(r.plans(0).predicted_rank() == 1);
  CHECK(r.plans(0).simulated_rank() == 3);
  REQUIRE(r.misranked_size() == 3);
  CHECK(r.misranked(0) == "a before b: predicted 10.000 < 12.000 ms, simulated 20.000 > 12.000 ms");
  REQUIRE(r.quantities_size() == 1);
  CHECK(r.quantities(0).quantity() == "iteration_time_ms");
  CHECK(r.quantities(0).count() == 4);
  const auto svg = PredictionChartSvg(r);
  REQUIRE(svg.ok());
  CHECK(svg->find("predicted vs simulated iteration time (ms)") != std::string::npos);
  CHECK(svg->find("the planner picks a, 100.0% slower than the simulated best, c") != std::string::npos);
  const std::string text = hetsim::evaluation::FormatPlanValidation(r);
  CHECK(text.find("Kendall tau-b 0.000, Spearman rho 0.200") != std::string::npos);
}

TEST_CASE("a set whose pick is the simulated best", "[evaluation]") {
  v1::PlanValidationReport r;
  *r.add_plans() = Point("x", 5, 9);
  *r.add_plans() = Point("y", 6, 11);
  SummarizePredictions(&r);
  CHECK(r.best_matches());
  CHECK(r.best_regret_percent() == 0.0);
  CHECK(r.kendall_tau() == Approx(1.0));
  CHECK(r.misranked().empty());
}

TEST_CASE("no plan predicts an iteration time: nothing to rank or chart", "[evaluation]") {
  v1::PlanValidationReport r;
  r.add_plans()->set_plan_name("only-stages");
  SummarizePredictions(&r);
  CHECK(r.predicted_best().empty());
  CHECK_FALSE(PredictionChartSvg(r).ok());
}

}  // namespace
