// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Partitioned namespaces (issue 44): a namespace's schedules spread over P
// hash tags by a fixed hash of their ids, every call on one partition, every
// worker claiming from all of them in turn, listings and dead letters merged,
// and a partition count other than the stored one refused.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/detail/key_space.hpp>
#include <chronopool/durable/error.hpp>

#include "sync_redis.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;

namespace partitions_test {

constexpr std::uint32_t eight = 8;

cd::scheduler_options options_with(const std::string& ns, std::uint32_t partitions) {
  auto o = dt::fast_options(ns, dt::test_redis_options());
  o.partitions = partitions;
  return o;
}

// Ids "<stem>00", "<stem>01", ...: 64 of stem "p" cover all 8 partitions.
std::vector<std::string> ids(const std::string& stem, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(stem + (i < 10 ? "0" : "") + std::to_string(i));
  return out;
}

cd::schedule_spec one_shot_now(const std::string& id, const std::string& task) {
  cd::schedule_spec s;
  s.id = id;
  s.task = task;
  return s;
}

// The fires a handler saw, by schedule id, in the order they ran.
struct fired_ids {
  std::mutex m;
  std::vector<std::string> ids;
  void add(const std::string& id) {
    std::lock_guard lk(m);
    ids.push_back(id);
  }
  std::vector<std::string> copy() {
    std::lock_guard lk(m);
    return ids;
  }
};

}  // namespace partitions_test

namespace pt = partitions_test;

BOOST_AUTO_TEST_SUITE(durable_partitions)

BOOST_AUTO_TEST_CASE(an_ids_partition_is_fnv1a_of_its_text_before_the_first_at) {
  using cd::detail::partition_of;
  // FNV-1a 32 of "a" is 0xe40c292c; of "" the offset basis 2166136261.
  BOOST_TEST(partition_of("a", 8) == 0xe40c292cu % 8);
  BOOST_TEST(partition_of("a", 1024) == 0xe40c292cu % 1024);
  BOOST_TEST(partition_of("", 8) == 2166136261u % 8);
  BOOST_TEST(partition_of("a@1700000000000", 8) == partition_of("a", 8));  // a fire id: its schedule's
  BOOST_TEST(partition_of("a@1@2", 8) == partition_of("a", 8));            // a re-driven fire's fire id too
  BOOST_TEST(partition_of("job-1", 8) == 6u);
  BOOST_TEST(partition_of("anything", 1) == 0u);
}

BOOST_AUTO_TEST_CASE(partition_keys_have_a_hash_tag_each_and_one_wake_channel) {
  const cd::detail::key_space one("orders", 0, 1);
  BOOST_TEST(one.due_key() == "cp:{orders}:due");  // the layout from before partitions
  const cd::detail::key_space third("orders", 3, 8);
  BOOST_TEST(third.due_key() == "cp:{orders{3}:due");
  BOOST_TEST(third.wake_channel() == "cp:{orders}:wake");
  const cd::detail::namespace_layout layout("orders", 8);
  BOOST_TEST(layout.size() == 8u);
  BOOST_TEST(layout.of("job-1").prefix() == "cp:{orders{6}:");
  BOOST_TEST(layout.meta().prefix() == "cp:{orders}:");
}

BOOST_AUTO_TEST_CASE(a_wake_message_names_its_partition) {
  cd::detail::redis_value m;
  m.type = cd::detail::redis_value::kind::array;
  m.elements.resize(3);
  for (auto& e : m.elements) e.type = cd::detail::redis_value::kind::string;
  m.elements[2].str = "5 1700000000000";
  BOOST_TEST(cd::detail::wake_partition(m).value_or(99) == 5u);
  m.elements[2].str = "1700000000000";  // one partition: names none
  BOOST_TEST(!cd::detail::wake_partition(m).has_value());
}

BOOST_FIXTURE_TEST_CASE(partition_counts_outside_1_to_1024_are_refused_with_their_value, dt::pool_fixture) {
  for (const std::uint32_t bad : {0u, 1025u, 4000000000u}) {
    try {
      cd::scheduler s(pool.get_executor(), pt::options_with(ns, bad));
      BOOST_ERROR("partitions " << bad << " was accepted");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find("scheduler_options.partitions") != std::string::npos, what);
      BOOST_TEST(what.find(std::to_string(bad)) != std::string::npos, what);
    }
  }
  BOOST_CHECK_NO_THROW(cd::scheduler(pool.get_executor(), pt::options_with(ns, 1024)));
}

BOOST_FIXTURE_TEST_CASE(schedules_spread_over_the_partitions_and_every_one_fires, dt::pool_fixture) {
  pt::fired_ids fired;  // first: it outlives the scheduler
  cd::scheduler s(pool.get_executor(), pt::options_with(ns, pt::eight));
  s.register_handler("t", [&](const cd::fire_context& c) { fired.add(c.schedule_id); });
  const auto all = pt::ids("p", 64);
  // Half through one bulk upsert (grouped per partition), half one by one.
  std::vector<cd::schedule_spec> specs;
  for (std::size_t i = 0; i < 32; ++i) specs.push_back(pt::one_shot_now(all[i], "t"));
  const auto results = s.async_upsert_schedules(specs, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(results.size() == 32u);
  for (std::size_t i = 0; i < 32; ++i) {
    BOOST_TEST(results[i].id == all[i]);  // in the order given
    BOOST_TEST((results[i].outcome == cd::upsert_outcome::created), results[i].error);
  }
  for (std::size_t i = 32; i < 64; ++i) s.async_schedule(all[i], "t", "", 0ms, boost::asio::use_future).get();

  // Each schedule's hash sits in its partition's hash tag, and nowhere else.
  dt::sync_redis redis(dt::test_redis_options());
  std::set<std::uint32_t> used;
  for (const auto& id : all) {
    const auto k = cd::detail::partition_of(id, pt::eight);
    used.insert(k);
    const std::string key = "cp:{" + ns + "{" + std::to_string(k) + "}:s:" + id;
    BOOST_TEST(redis.exec({"EXISTS", key}).integer == 1, key);
    BOOST_TEST(redis.exec({"EXISTS", "cp:{" + ns + "}:s:" + id}).integer == 0);
  }
  BOOST_TEST(used.size() == 8u);
  BOOST_TEST(redis.exec({"GET", "cp:{" + ns + "}:partitions"}).str == "8");

  s.start();
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return fired.copy().size() >= all.size(); }, 30s));
  auto got = fired.copy();
  std::sort(got.begin(), got.end());
  BOOST_TEST(got == all, boost::test_tools::per_element());  // each exactly once
}

BOOST_FIXTURE_TEST_CASE(a_worker_claims_from_every_partition_in_turn, dt::pool_fixture) {
  // Ten due fires in each partition, one claimed at a time: claims that
  // always began at one partition would drain it (and the next) first.
  auto o = pt::options_with(ns, pt::eight);
  o.claim_batch = 1;
  o.max_in_flight = 1;
  pt::fired_ids fired;
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("t", [&](const cd::fire_context& c) { fired.add(c.schedule_id); });
  std::vector<cd::schedule_spec> specs;
  std::vector<int> per_partition(pt::eight, 0);
  for (int i = 0; specs.size() < 80; ++i) {
    const std::string id = "f" + std::to_string(i);
    auto& n = per_partition[cd::detail::partition_of(id, pt::eight)];
    if (n == 10) continue;
    ++n;
    specs.push_back(pt::one_shot_now(id, "t"));
  }
  for (const auto& r : s.async_upsert_schedules(specs, boost::asio::use_future).get())
    BOOST_TEST_REQUIRE((r.outcome == cd::upsert_outcome::created));
  s.start();
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return fired.copy().size() >= 80u; }, 60s));
  const auto order = fired.copy();
  std::set<std::uint32_t> first;
  for (std::size_t i = 0; i < 16; ++i) first.insert(cd::detail::partition_of(order[i], pt::eight));
  BOOST_TEST(first.size() == 8u);  // every partition served among the first 16 fires
}

BOOST_FIXTURE_TEST_CASE(an_idle_worker_is_woken_by_any_partition_not_by_its_poll, dt::pool_fixture) {
  auto o = pt::options_with(ns, pt::eight);
  o.max_poll = 60s;  // the fires below come long before a poll would find them
  pt::fired_ids fired;
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("t", [&](const cd::fire_context& c) { fired.add(c.schedule_id); });
  s.start();
  // Let its first claims (one per partition, at start) come back empty.
  std::this_thread::sleep_for(500ms);
  const auto all = pt::ids("w", 16);
  for (const auto& id : all) s.async_schedule(id, "t", "", 300ms, boost::asio::use_future).get();
  BOOST_TEST(dt::wait_until([&] { return fired.copy().size() >= all.size(); }, 30s));
}

BOOST_FIXTURE_TEST_CASE(listing_inspecting_pausing_and_cancelling_work_across_partitions, dt::pool_fixture) {
  cd::scheduler s(pool.get_executor(), pt::options_with(ns, pt::eight));
  const auto all = pt::ids("l", 30);
  for (const auto& id : all)
    s.async_schedule_at_fixed_rate(id, "t", "", 1h, 1h, cd::schedule_options{}, boost::asio::use_future).get();
  s.async_schedule_at_fixed_rate("other", "t", "", 1h, 1h, cd::schedule_options{}, boost::asio::use_future).get();
  // Pages of 7, in id order, each id once, across the 8 partitions.
  cd::schedule_query q;
  q.prefix = "l";
  q.limit = 7;
  std::vector<std::string> listed;
  for (int page = 0; page < 20; ++page) {
    const auto p = s.async_list_schedules(q, boost::asio::use_future).get();
    BOOST_TEST(p.schedules.size() <= 7u);
    for (const auto& e : p.schedules) listed.push_back(e.id);
    if (p.next_cursor.empty()) break;
    q.after = p.next_cursor;
  }
  BOOST_TEST(listed == all, boost::test_tools::per_element());
  // One schedule's calls go to its partition.
  BOOST_TEST(s.async_pause("l07", boost::asio::use_future).get());
  BOOST_TEST((s.async_inspect("l07", boost::asio::use_future).get().summary.state == cd::schedule_state::paused));
  BOOST_TEST(s.async_resume("l07", boost::asio::use_future).get());
  BOOST_TEST(s.async_trigger_now("l08", boost::asio::use_future).get().fire_id.rfind("l08@", 0) == 0u);
  for (const auto& id : all) BOOST_TEST(s.async_cancel(id, boost::asio::use_future).get(), id);
  q = {};
  const auto rest = s.async_list_schedules(q, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(rest.schedules.size() == 1u);
  BOOST_TEST(rest.schedules[0].id == "other");
  BOOST_TEST(rest.next_cursor.empty());
}

BOOST_FIXTURE_TEST_CASE(dead_letters_are_listed_re_driven_and_deleted_across_partitions, dt::pool_fixture) {
  auto o = pt::options_with(ns, pt::eight);
  o.failure.max_attempts = 1;
  std::atomic<bool> fail{true};
  pt::fired_ids ok;
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("t", [&](const cd::fire_context& c) {
    if (fail) throw std::runtime_error("boom");
    ok.add(c.schedule_id);
  });
  const auto all = pt::ids("dead-", 6);  // partitions 6, 1, 0, 3, 2 and 5
  for (const auto& id : all) s.async_schedule(id, "t", "", 0ms, boost::asio::use_future).get();
  s.start();
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return dt::dead_letters(s).size() == all.size(); }, 30s));
  const auto dead = dt::dead_letters(s);
  std::set<std::string> schedules;
  for (std::size_t i = 0; i < dead.size(); ++i) {
    schedules.insert(dead[i].schedule_id);
    if (i > 0) BOOST_TEST((dead[i - 1].dead_lettered_at <= dead[i].dead_lettered_at));  // oldest first
  }
  BOOST_TEST(schedules.size() == all.size());
  BOOST_TEST(s.async_list_dead_letters(2, boost::asio::use_future).get().size() == 2u);
  // Re-driven into its schedule's partition, where it runs.
  fail = false;
  const std::string redriven = s.async_redrive_dead_letter(dead[0].fire_id, boost::asio::use_future).get();
  BOOST_TEST(redriven == dead[0].schedule_id);
  BOOST_TEST(dt::wait_until([&] { return ok.copy().size() == 1u; }, 30s));
  BOOST_TEST(s.async_delete_dead_letter(dead[1].fire_id, boost::asio::use_future).get());
  BOOST_TEST(dt::dead_letters(s).size() == all.size() - 2);
}

BOOST_FIXTURE_TEST_CASE(another_partition_count_than_the_stored_one_is_refused_naming_both, dt::pool_fixture) {
  {
    cd::scheduler first(pool.get_executor(), pt::options_with(ns, pt::eight));
    first.async_schedule("x", "t", "", 1h, boost::asio::use_future).get();  // stores 8
  }
  cd::scheduler other(pool.get_executor(), pt::options_with(ns, 4));
  const auto ec = dt::error_of([&](auto h) { other.async_schedule("y", "t", "", 1h, std::move(h)); });
  BOOST_TEST(ec == make_error_code(cd::error::partitions_mismatch), ec.message());
  BOOST_TEST(ec.message().find("8 partitions") != std::string::npos, ec.message());
  BOOST_TEST(ec.message().find("partitions is 4") != std::string::npos, ec.message());
  BOOST_TEST(other.connection_error() == make_error_code(cd::error::partitions_mismatch));
  dt::sync_redis redis(dt::test_redis_options());
  BOOST_TEST(redis.exec({"EXISTS", "cp:{" + ns + "{" + std::to_string(cd::detail::partition_of("y", 4)) + "}:s:y"})
                 .integer == 0);  // nothing written
  // A caller that addresses the partitioned namespace as one partition (a
  // build from before partitions) is refused by the library itself.
  const cd::detail::key_space unpartitioned(ns);
  const auto claim = redis.exec(cd::detail::claim_call(unpartitioned, "old", 1000, 1));
  BOOST_TEST_REQUIRE(claim.is_error());
  BOOST_TEST(claim.str.rfind("PARTITIONS the namespace has 8 partitions", 0) == 0u, claim.str);
}

BOOST_FIXTURE_TEST_CASE(a_namespace_with_data_from_before_partitions_has_one, dt::pool_fixture) {
  {
    cd::scheduler old(pool.get_executor(), pt::options_with(ns, 1));
    old.async_schedule("x", "t", "", 1h, boost::asio::use_future).get();
  }
  // As if written before partitions existed: no count stored.
  dt::sync_redis redis(dt::test_redis_options());
  redis.exec({"DEL", "cp:{" + ns + "}:partitions"});
  cd::scheduler partitioned(pool.get_executor(), pt::options_with(ns, pt::eight));
  const auto ec = dt::error_of([&](auto h) { partitioned.async_cancel("x", std::move(h)); });
  BOOST_TEST(ec == make_error_code(cd::error::partitions_mismatch), ec.message());
  BOOST_TEST(ec.message().find("1 partition;") != std::string::npos, ec.message());
  cd::scheduler same(pool.get_executor(), pt::options_with(ns, 1));
  BOOST_TEST(same.async_cancel("x", boost::asio::use_future).get());  // its data works as before
}

BOOST_FIXTURE_TEST_CASE(a_partition_that_lost_its_data_is_reported_and_its_tokens_keep_growing, dt::pool_fixture) {
  std::mutex m;
  std::vector<std::uint64_t> tokens;
  cd::scheduler s(pool.get_executor(), pt::options_with(ns, pt::eight));
  s.register_handler("t", [&](const cd::fire_context& c) {
    std::lock_guard lk(m);
    tokens.push_back(c.token);
  });
  s.start();
  const auto k = cd::detail::partition_of("job-1", pt::eight);
  s.async_schedule("job-1", "t", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(dt::wait_until([&] {
    std::lock_guard lk(m);
    return tokens.size() == 1u;
  }));
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return s.stats().acked == 1u; }));
  // That partition's keys vanish (as when its master lost its writes).
  dt::sync_redis redis(dt::test_redis_options());
  const std::string p = "cp:{" + ns + "{" + std::to_string(k) + "}:";
  redis.exec({"DEL", p + "epoch", p + "fence"});
  s.async_schedule("job-1", "t", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(dt::wait_until([&] {
    std::lock_guard lk(m);
    return tokens.size() == 2u;
  }));
  BOOST_TEST(s.stats().data_lost == 1u);
  std::lock_guard lk(m);
  BOOST_TEST(tokens[1] > tokens[0]);
}

BOOST_AUTO_TEST_SUITE_END()
