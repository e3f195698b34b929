// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/durable/error.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace chronopool::durable {
namespace {

// Every durable category carries this id: Boost compares categories with an
// id by the id, so a code made with Redis's text (text_category below)
// equals the same code of durable_category().
constexpr unsigned long long category_id = 0xc4a0b5e3d1f20a71ULL;

// Fixed texts only: nothing from the options (host names, user names,
// passwords) ever goes into a message, so logging an error_code cannot leak
// a secret. Redis's own error text is added only by text_category, only for
// replies Redis words itself (see make_error_code(error, string_view)).
class category : public boost::system::error_category {
 public:
  category() noexcept : error_category(category_id) {}
  const char* name() const noexcept override { return "chronopool.durable"; }

  std::string message(int ev) const override {
    switch (static_cast<error>(ev)) {
      case error::not_connected:
        return "not connected to Redis";
      case error::request_timeout:
        return "Redis did not answer within the request timeout";
      case error::connect_timeout:
        return "connecting to Redis did not finish within the connect timeout";
      case error::connection_lost:
        return "the connection to Redis was lost";
      case error::protocol_error:
        return "the reply stream from Redis could not be parsed";
      case error::auth_failed:
        return "Redis refused the authentication";
      case error::server_error:
        return "Redis answered with an error";
      case error::stale_lease:
        return "the lease is gone or its fencing token was superseded";
      case error::schedule_exists:
        return "a schedule with this id already exists";
      case error::no_such_schedule:
        return "no schedule with this id";
      case error::no_handler:
        return "no handler is registered for the task name";
      case error::shut_down:
        return "the durable scheduler was shut down";
      case error::out_of_memory:
        return "Redis is out of memory (maxmemory) and refused the write";
      case error::data_lost:
        return "Redis lost the namespace's data (its epoch changed or vanished: restart without persistence, "
               "FLUSHALL, or failover to a replica that lost writes)";
      case error::tls_failed:
        return "the TLS connection to Redis failed";
      case error::no_master:
        return "no sentinel named a Redis master that answers as one";
      case error::not_periodic:
        return "the schedule is a one-shot: only periodic schedules take extra fires (trigger now, backfill)";
      case error::too_many_fires:
        return "the range holds more occurrences than one backfill may enqueue";
      case error::payload_too_large:
        return "the payload is larger than scheduler_options::max_payload_bytes";
      case error::version_mismatch:
        return "Redis runs a chronopool function library, or holds namespace data, that this build cannot work with";
      case error::too_many_redirects:
        return "Redis Cluster redirected the command more often than cluster_options::max_redirects allows";
      case error::cluster_down:
        return "no Redis Cluster node gave a usable slot map, or no master serves the key's hash slot";
      case error::partitions_mismatch:
        return "the namespace is stored with another partition count than this scheduler's";
    }
    return "unknown chronopool.durable error";
  }
};

// The same codes, with the text of Redis's error reply (OpenSSL's for
// tls_failed) after the message.
class text_category final : public category {
 public:
  explicit text_category(std::string text) : text_(std::move(text)) {}
  std::string message(int ev) const override {
    switch (static_cast<error>(ev)) {
      case error::tls_failed:
        return category::message(ev) + " (OpenSSL: " + text_ + ")";
      case error::payload_too_large:
      case error::cluster_down:
      case error::partitions_mismatch:
        // The sizes, the partition counts, or the nodes tried and why they
        // failed, worded by chronopool.
        return category::message(ev) + " (" + text_ + ")";
      default:
        return category::message(ev) + " (Redis: " + text_ + ")";
    }
  }

 private:
  std::string text_;
};

constexpr std::size_t max_text = 200;
constexpr std::size_t max_texts = 256;

}  // namespace

const boost::system::error_category& durable_category() noexcept {
  // A function-local static: no static-initialisation order issue.
  static const category instance;
  return instance;
}

boost::system::error_code make_error_code(error e, std::string_view server_text) {
  if (server_text.empty()) return make_error_code(e);
  std::string text(server_text.substr(0, max_text));
  // An error_code holds a pointer to its category, so every category handed
  // out must live as long as the program: they are never freed (nor is the
  // map, which may be used during static destruction). Redis words these
  // replies from a handful of fixed texts, so the bound is never reached in
  // practice; past it, codes come without text rather than growing memory.
  static std::mutex m;
  static auto* texts = new std::map<std::string, std::unique_ptr<text_category>, std::less<>>();
  std::lock_guard lk(m);
  auto it = texts->find(text);
  if (it == texts->end()) {
    if (texts->size() >= max_texts) return make_error_code(e);
    auto cat = std::make_unique<text_category>(text);
    it = texts->emplace(std::move(text), std::move(cat)).first;
  }
  return {static_cast<int>(e), *it->second};
}

}  // namespace chronopool::durable
