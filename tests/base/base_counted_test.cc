// base/counted.h: "1 stage", "2 stages", "3 microbatches".
#include <catch2/catch.hpp>

#include "base/counted.h"

TEST_CASE("Counted writes the singular for one and the plural otherwise", "[base][counted]") {
  CHECK(hetsim::Counted(1, "stage") == "1 stage");
  CHECK(hetsim::Counted(2, "stage") == "2 stages");
  CHECK(hetsim::Counted(0, "pipeline") == "0 pipelines");
  CHECK(hetsim::Counted(1, "microbatch") == "1 microbatch");
  CHECK(hetsim::Counted(8, "microbatch") == "8 microbatches");
  CHECK(hetsim::Counted(1, "GPU") == "1 GPU");
  CHECK(hetsim::Counted(512, "GPU") == "512 GPUs");
  CHECK(hetsim::Counted(3, "pass") == "3 passes");
  CHECK(hetsim::Counted(-1, "sample") == "-1 sample");
}
