// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable --cluster: the CLI reaches a namespace through any
// seed of the test cluster, whichever master serves it, partitions too.
#include "cluster_support.hpp"

#include <chronopool/durable/detail/key_space.hpp>

#include <boost/asio/use_future.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
namespace cdd = chronopool::durable::detail;
using namespace std::chrono_literals;

namespace {
namespace cluster_cli_test {

struct run_result {
  int code = -1;
  std::string out;  // stdout and stderr
};

// Runs the CLI with `args` (none of which needs quoting here).
run_result run_cli(const std::vector<std::string>& args) {
  std::string cmd = CHRONOPOOL_DURABLE_CLI;
  for (const auto& a : args) cmd += " " + a;
  cmd += " 2>&1";
  run_result r;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  BOOST_TEST_REQUIRE(p != nullptr);
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) r.out += buf;
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace cluster_cli_test
}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_cluster_cli, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(the_cli_reaches_a_partitioned_namespace_through_one_seed) {
  auto& g = dt::shared_cluster();
  const auto ns_here = dt::unique_namespace();
  auto o = dt::fast_options(ns_here, g.client_options());
  o.partitions = 4;
  {
    cd::scheduler s(pool.get_executor(), o);
    for (int i = 0; i < 8; ++i)
      s.async_schedule("cli" + std::to_string(i), "t", "", 1h, boost::asio::use_future).get();
  }
  // One seed is enough: the others come from its slot map.
  const std::string seed = "127.0.0.1:" + std::to_string(g.port(0));
  auto listed = cluster_cli_test::run_cli({"--cluster", seed, "--namespace", ns_here, "--partitions", "4", "list"});
  BOOST_TEST(listed.code == 0, listed.out);
  for (int i = 0; i < 8; ++i)
    BOOST_TEST(listed.out.find("cli" + std::to_string(i)) != std::string::npos, "cli" << i << " in " << listed.out);
  // A change through the CLI lands on the schedule's own master.
  const std::string id = "cli3";
  auto gone = cluster_cli_test::run_cli({"--cluster", seed, "--namespace", ns_here, "--partitions", "4", "delete", id});
  BOOST_TEST(gone.code == 0, gone.out);
  const auto due_key = cdd::namespace_layout(ns_here, 4).of(id).due_key();
  dt::sync_redis owner(g.node_options(g.index_of(g.slot_owner(cdd::key_slot(due_key)))));
  BOOST_TEST(owner.exec({"ZSCORE", due_key, id}).is_nil());
}

BOOST_AUTO_TEST_SUITE_END()
