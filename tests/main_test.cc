#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "app/cli/commands.h"

TEST_CASE("every subcommand has a name, a summary and an entry point") {
  for (const auto& c : hetsim::cli::AllCommands()) {
    CHECK(c.name != nullptr);
    CHECK(c.summary != nullptr);
    CHECK(c.run != nullptr);
  }
}
