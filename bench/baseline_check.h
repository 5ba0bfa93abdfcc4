// `plan_bench --self-check`: the peer baselines on the planner's golden vector (pools worked out
// by hand from each peer's description) and on seeded random record sets (every placement
// verifies, no pool below the lower bound). Fast enough for the test suite.
#pragma once

namespace onepool::bench {

/// Prints one line per check; returns 0 when all pass, 1 otherwise.
int run_baseline_self_check();

}  // namespace onepool::bench
