// service/evaluation/rank_stats: Spearman's rho and average ranks against hand computation.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "service/evaluation/rank_stats.h"

namespace {

using hetsim::evaluation::AverageRanks;
using hetsim::evaluation::ErrorPercent;
using hetsim::evaluation::SpearmanRho;

TEST_CASE("average ranks share ties", "[evaluation]") {
  CHECK(AverageRanks({10, 30, 20}) == std::vector<double>{1, 3, 2});
  CHECK(AverageRanks({5, 7, 7, 9}) == std::vector<double>{1, 2.5, 2.5, 4});
  CHECK(AverageRanks({4, 4, 4}) == std::vector<double>{2, 2, 2});
}

TEST_CASE("Spearman's rho of rankings", "[evaluation]") {
  CHECK(SpearmanRho({1, 2, 3, 4}, {10, 20, 30, 40}) == Approx(1.0));
  CHECK(SpearmanRho({1, 2, 3, 4}, {40, 30, 20, 10}) == Approx(-1.0));
  // Without ties rho = 1 - 6 sum d^2 / (n (n^2 - 1)): ranks (1,2,3,4) vs (1,3,2,4), sum d^2 = 2,
  // rho = 1 - 12 / 60 = 0.8.
  CHECK(SpearmanRho({1, 2, 3, 4}, {1, 3, 2, 4}) == Approx(0.8));
  // With a tie: a ranks (1,2,3), b = (5,5,9) ranks (1.5,1.5,3); centred a (-1,0,1), b (-0.5,-0.5,1):
  // sum ab = 0.5 + 0 + 1 = 1.5, sum a^2 = 2, sum b^2 = 1.5: rho = 1.5 / sqrt(3) = 0.8660.
  CHECK(SpearmanRho({1, 2, 3}, {5, 5, 9}) == Approx(1.5 / std::sqrt(3.0)));
  CHECK(SpearmanRho({1}, {2}) == 0.0);
  CHECK(SpearmanRho({3, 3}, {1, 2}) == 0.0);
}

TEST_CASE("relative error in percent", "[evaluation]") {
  CHECK(ErrorPercent(90, 100) == Approx(-10));
  CHECK(ErrorPercent(150, 100) == Approx(50));
  CHECK(ErrorPercent(5, 0) == 0.0);
}

}  // namespace
