// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where a pool reports what no caller can read: error_handler, then
// scheduled_thread_pool_options::log_handler, then the process-wide handler, by default one
// line on stderr (chronopool/log.hpp).
#include "../../support/stderr_capture.hpp"

#include <chronopool/log.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using chronopool::log_record;
using chronopool::log_severity;
using chronopool::scheduled_thread_pool;

namespace {

// What a handler saw of one record, copied (the record's views die with the call).
struct seen_record {
  log_severity severity;
  std::string component;
  std::string event;
  std::string message;
  bool has_error;
  std::vector<std::pair<std::string, std::string>> fields;
};

struct recorder {
  std::mutex mutex;
  std::vector<seen_record> records;

  chronopool::log_handler handler() {
    return [this](const log_record& r) {
      seen_record s{r.severity, std::string(r.component), std::string(r.event), std::string(r.message),
                    r.error != nullptr, {}};
      for (const auto& f : r.fields) s.fields.emplace_back(f.name, f.value);
      const std::lock_guard lock(mutex);
      records.push_back(std::move(s));
    };
  }
  std::vector<seen_record> take() {
    const std::lock_guard lock(mutex);
    return std::move(records);
  }
};

// Restores the default process-wide handler however a test ends.
struct process_handler_scope {
  explicit process_handler_scope(chronopool::log_handler h) { chronopool::set_log_handler(std::move(h)); }
  ~process_handler_scope() { chronopool::set_log_handler({}); }
};

void fail_one_task(scheduled_thread_pool& pool) {
  pool.execute([] { throw std::runtime_error("boom"); });
  pool.join();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(log_handler)

BOOST_AUTO_TEST_CASE(a_failed_task_is_one_structured_error_record) {
  recorder process;
  process_handler_scope scope(process.handler());
  chronopool::scheduled_thread_pool_options o;
  o.thread_name_prefix = "jobs";
  o.core_pool_size = 1;
  scheduled_thread_pool pool(o);
  fail_one_task(pool);
  const auto records = process.take();
  BOOST_TEST_REQUIRE(records.size() == 1u);
  const seen_record& r = records.front();
  BOOST_TEST((r.severity == log_severity::error));
  BOOST_TEST(r.component == "pool");
  BOOST_TEST(r.event == "task_failed");
  BOOST_TEST(r.message.find("failed: boom") != std::string::npos);
  BOOST_TEST(r.has_error);
  BOOST_TEST_REQUIRE(r.fields.size() == 2u);
  BOOST_TEST(r.fields[0].first == "pool");
  BOOST_TEST(r.fields[0].second == "jobs");
  BOOST_TEST(r.fields[1].first == "task");
  BOOST_TEST(r.message == "task #" + r.fields[1].second + " failed: boom");
}

BOOST_AUTO_TEST_CASE(the_pool_s_own_handler_comes_before_the_process_handler) {
  recorder process;
  recorder own;
  process_handler_scope scope(process.handler());
  chronopool::scheduled_thread_pool_options o;
  o.log_handler = own.handler();
  o.core_pool_size = 1;
  scheduled_thread_pool pool(o);
  fail_one_task(pool);
  BOOST_TEST(own.take().size() == 1u);
  BOOST_TEST(process.take().empty());
}

BOOST_AUTO_TEST_CASE(an_error_handler_takes_the_error_and_nothing_is_logged) {
  recorder process;
  process_handler_scope scope(process.handler());
  chronopool::scheduled_thread_pool_options o;
  int handled = 0;
  o.error_handler = [&](std::exception_ptr, const chronopool::task_view*) { ++handled; };
  o.core_pool_size = 1;
  scheduled_thread_pool pool(o);
  fail_one_task(pool);
  BOOST_TEST(handled == 1);
  BOOST_TEST(process.take().empty());
}

BOOST_AUTO_TEST_CASE(a_throwing_hook_is_logged_as_hook_failed) {
  recorder own;
  chronopool::scheduled_thread_pool_options o;
  o.log_handler = own.handler();
  o.on_thread_start = [](std::size_t) { throw std::runtime_error("no start"); };
  o.core_pool_size = 1;
  scheduled_thread_pool pool(o);
  auto f = pool.submit([] { return 1; });
  BOOST_TEST(f.get() == 1);  // the pool works on
  pool.join();
  const auto records = own.take();
  BOOST_TEST_REQUIRE(records.size() == 1u);
  BOOST_TEST(records[0].event == "hook_failed");
  BOOST_TEST(records[0].message == "the on_thread_start hook threw: no start");
}

BOOST_AUTO_TEST_CASE(a_throwing_log_handler_is_swallowed) {
  chronopool::scheduled_thread_pool_options o;
  int calls = 0;
  o.log_handler = [&](const log_record&) {
    ++calls;
    throw std::runtime_error("the log is full");
  };
  o.core_pool_size = 1;
  scheduled_thread_pool pool(o);
  pool.execute([] { throw std::runtime_error("boom"); });
  auto f = pool.submit([] { return 2; });
  BOOST_TEST(f.get() == 2);
  pool.join();
  BOOST_TEST(calls == 1);
}

BOOST_AUTO_TEST_CASE(by_default_one_line_goes_to_stderr_and_an_empty_handler_restores_that) {
  {
    recorder process;
    process_handler_scope scope(process.handler());
  }  // set back to the default
  test_support::stderr_capture capture;
  chronopool::scheduled_thread_pool_options o;
  o.thread_name_prefix = "jobs";
  o.core_pool_size = 1;
  scheduled_thread_pool pool(o);
  fail_one_task(pool);
  const std::string text = capture.text();
  BOOST_TEST(text.rfind("chronopool pool error: task #", 0) == 0, text);
  BOOST_TEST(text.find(" failed: boom [pool=jobs task=") != std::string::npos, text);
  BOOST_TEST(text.back() == '\n');
  BOOST_TEST(text.find('\n') == text.size() - 1);  // one line
}

BOOST_AUTO_TEST_CASE(the_line_format) {
  const chronopool::log_field fields[] = {{"a", "1"}, {"b", "two"}};
  log_record r{log_severity::warning, "durable", "retry", "it went wrong", nullptr, fields};
  BOOST_TEST(chronopool::format_log_line(r) == "chronopool durable warning: it went wrong [a=1 b=two]");
  r.fields = {};
  r.severity = log_severity::info;
  BOOST_TEST(chronopool::format_log_line(r) == "chronopool durable info: it went wrong");
  BOOST_TEST(chronopool::to_string(log_severity::debug) == "debug");
  BOOST_TEST(chronopool::to_string(log_severity::error) == "error");
}

BOOST_AUTO_TEST_SUITE_END()
