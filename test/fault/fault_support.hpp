// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Helpers shared by the fault-injection tests: bounded waits (a broken
// library fails a test instead of hanging it), a counter of live callables
// (a leaked task keeps its callable alive), and the exception payloads the
// tests throw.
#pragma once

#include "fault_counter.hpp"
#include "../support/bounded_wait.hpp"

#include "../support/asio.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace fault {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

/// Generous bound for anything that must happen (2 cores, sanitizers).
inline constexpr std::chrono::seconds long_wait{10};

/// Polls @p pred every millisecond until it holds or @p timeout passes.
template <class Pred>
bool eventually(Pred pred, steady::duration timeout = long_wait) {
  return test_support::eventually(pred, timeout);
}

/// Runs @p io until it runs out of work; false if it still had work after
/// @p timeout (a leaked wait holding outstanding work).
inline bool run_until_idle(asio::io_context& io, steady::duration timeout = long_wait) {
  io.restart();
  const auto limit = steady::now() + timeout;
  while (!io.stopped() && steady::now() < limit) io.run_for(10ms);
  return io.stopped();
}

/// Counts live copies of whatever holds a `tracked` member.
struct life_counter {
  std::atomic<long> live{0};
};

class tracked {
 public:
  explicit tracked(life_counter& c) noexcept : c_(&c) { c_->live.fetch_add(1); }
  tracked(const tracked& o) noexcept : tracked(*o.c_) {}
  tracked& operator=(const tracked&) = delete;
  ~tracked() { c_->live.fetch_sub(1); }

 private:
  life_counter* c_;
};

// ---- exception payloads ---------------------------------------------------------

/// A thrown type that is not derived from std::exception.
struct custom_failure {
  int code;
};

/// What a faulty task or handler throws.
enum class payload { runtime_error, logic_error, bad_alloc, int_value, custom_struct };

inline constexpr payload all_payloads[] = {payload::runtime_error, payload::logic_error, payload::bad_alloc,
                                           payload::int_value, payload::custom_struct};

inline const char* name(payload p) {
  switch (p) {
    case payload::runtime_error: return "std::runtime_error";
    case payload::logic_error: return "std::logic_error";
    case payload::bad_alloc: return "std::bad_alloc";
    case payload::int_value: return "int";
    case payload::custom_struct: return "custom struct";
  }
  return "?";
}

/// Throws @p p, counted as an injected fault: "@p where threw" (the payload
/// types are listed once in the report, not per kind).
[[noreturn]] inline void throw_payload(payload p, const std::string& where) {
  injected(where + " threw");
  switch (p) {
    case payload::runtime_error: throw std::runtime_error("injected runtime_error");
    case payload::logic_error: throw std::logic_error("injected logic_error");
    case payload::bad_alloc: throw std::bad_alloc();
    case payload::int_value: throw 42;
    case payload::custom_struct: throw custom_failure{7};
  }
  throw 0;
}

/// True when @p e holds exactly the payload @p p threw (type and value).
inline bool holds(const std::exception_ptr& e, payload p) {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return p == payload::bad_alloc;
  } catch (const std::runtime_error& x) {
    return p == payload::runtime_error && std::string(x.what()) == "injected runtime_error";
  } catch (const std::logic_error& x) {
    return p == payload::logic_error && std::string(x.what()) == "injected logic_error";
  } catch (int v) {
    return p == payload::int_value && v == 42;
  } catch (const custom_failure& c) {
    return p == payload::custom_struct && c.code == 7;
  } catch (...) {
    return false;
  }
}

/// The exception that calling @p f throws, or null.
template <class F>
std::exception_ptr thrown_by(F&& f) {
  try {
    f();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace fault
