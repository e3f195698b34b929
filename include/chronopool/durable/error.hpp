// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Error codes of the durable (Redis-backed) scheduler.
#pragma once

#include <boost/system/error_code.hpp>

#include <string_view>
#include <type_traits>

/// \namespace chronopool::durable
/// The durable component (library chronopool::durable): schedules kept in
/// Redis and run by a fleet of processes. See scheduler.
namespace chronopool::durable {

/// Failures reported by chronopool::durable operations as error_codes.
/// Transport errors from the socket (connection refused, reset, ...) are
/// passed through unchanged; these are the ones chronopool itself decides.
enum class error {
  not_connected = 1,   ///< no connection to Redis and none came up in time
  request_timeout,     ///< Redis did not answer within request_timeout
  connect_timeout,     ///< TCP connect + AUTH did not finish within connect_timeout
  connection_lost,     ///< the connection closed with the request outstanding
  protocol_error,      ///< the reply stream could not be parsed
  auth_failed,         ///< AUTH was refused, or Redis wants a password and none was given (keeps Redis's text)
  server_error,        ///< Redis answered with an error reply to a command that must succeed
  stale_lease,         ///< the fire's lease is gone or its fencing token was superseded
  schedule_exists,     ///< a schedule with this id already exists
  no_such_schedule,    ///< no schedule with this id
  no_handler,          ///< no handler is registered for the schedule's task name
  shut_down,           ///< the scheduler was stopped before the operation completed
  out_of_memory,       ///< Redis is at maxmemory and refused a write that needs memory (keeps Redis's text)
  data_lost,           ///< the namespace's data was lost (its epoch changed or vanished): the fire's state is gone
  tls_failed,          ///< the TLS handshake or session failed (keeps OpenSSL's text, e.g. why verification failed)
  no_master,           ///< Sentinel: no sentinel named a master, or the server named is not a master (yet)
  not_periodic,        ///< the operation needs a periodic schedule (trigger now, backfill) and this one is a one-shot
  too_many_fires,      ///< a backfill range holds more occurrences than allowed (keeps Redis's text with the count)
  payload_too_large,   ///< the payload is larger than scheduler_options::max_payload_bytes (the message names both sizes)
  version_mismatch,    ///< Redis runs a function library or holds namespace data this build cannot work with (keeps the text saying which)
  too_many_redirects,  ///< Redis Cluster: a command was redirected (MOVED, ASK) more than cluster_options::max_redirects times (keeps the last redirection)
  cluster_down,        ///< Redis Cluster: no seed gave a usable slot map, or no master serves the key's hash slot
  partitions_mismatch,  ///< the namespace is stored with another partition count than scheduler_options::partitions (the message names both)
};

/// The category of error codes made from durable::error, named
/// "chronopool.durable"; its messages never contain secrets.
const boost::system::error_category& durable_category() noexcept;

/// @p e as an error_code of durable_category(); found by argument-dependent
/// lookup, so an error compares equal to an error_code holding it.
inline boost::system::error_code make_error_code(error e) noexcept {
  return {static_cast<int>(e), durable_category()};
}

/// @p e as an error_code whose message() ends with @p server_text, the
/// text of the error reply Redis gave (auth_failed, out_of_memory,
/// version_mismatch), OpenSSL's text for tls_failed, the sizes for
/// payload_too_large, or the partition counts for partitions_mismatch. It
/// compares equal to make_error_code(e). Only replies Redis words itself
/// are passed here (they never echo a password); the text is cut to 200
/// bytes, and each distinct text is kept for the life of the program, at
/// most 256 of them (later ones give the code without text).
boost::system::error_code make_error_code(error e, std::string_view server_text);

}  // namespace chronopool::durable

/// \cond
// Makes durable::error convertible to boost::system::error_code (doxygen 1.9
// cannot place a specialization declared by its qualified name, hence the \cond).
template <>
struct boost::system::is_error_code_enum<chronopool::durable::error> : std::true_type {};
/// \endcond
