// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Which Asio chronopool is built on, and the names the library spells it by.
//
// Boost.Asio (boost::asio, error codes from boost::system) unless
// CHRONOPOOL_STANDALONE_ASIO is defined: then standalone Asio (::asio, error
// codes from std), 1.22.1 or later (Debian 12's libasio-dev). CMake sets the
// macro (option CHRONOPOOL_STANDALONE_ASIO) on the library target, and the
// installed package and chronopool.pc pass it on to users: a program must see
// the same choice as the library it links.
//
// The library names Asio only through this header:
//   chronopool::asio_ns   the Asio namespace (boost::asio or ::asio). A name
//                         of its own, so that a user's `namespace asio =
//                         boost::asio;` or `namespace net = boost::asio;`
//                         never meets it under `using namespace chronopool;`.
//   chronopool::sys_ns    error_code, error_condition, error_category and
//                         system_error of that Asio (boost::system or std).
//   CHRONOPOOL_ASIO_NAMESPACE_BEGIN / _END
//                         open and close the Asio namespace, for the
//                         specialisations of Asio's traits (async_result,
//                         associator, associated_executor...).
//   chronopool::detail::asio_compat
//                         the completion-token adapters that Asio moved out
//                         of `experimental` in 1.24 (Boost 1.80): append,
//                         as_tuple (for the tests), deferred; and target<T>(ex),
//                         any_io_executor::target<T>() checked for the type
//                         (standalone Asio 1.22 does not check it).
// It includes the Asio headers that most of the library needs (they cost
// about what io_context.hpp alone costs); the few heavier ones (coroutines,
// strands, thread_pool, Asio's own timers) are included where they are used.
#pragma once

#ifdef CHRONOPOOL_STANDALONE_ASIO

#include <asio/version.hpp>
#if ASIO_VERSION < 102201
#error "chronopool: standalone Asio 1.22.1 or later is required (CHRONOPOOL_STANDALONE_ASIO)"
#endif

#include <asio/any_io_executor.hpp>
#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/associator.hpp>
#include <asio/async_result.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/compose.hpp>
#include <asio/dispatch.hpp>
#include <asio/error.hpp>
#include <asio/error_code.hpp>
#include <asio/execution.hpp>
#include <asio/execution_context.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/prefer.hpp>
#include <asio/query.hpp>
#include <asio/system_error.hpp>
#include <asio/system_executor.hpp>
#include <asio/wait_traits.hpp>
#if ASIO_VERSION >= 102400
#include <asio/append.hpp>
#include <asio/as_tuple.hpp>
#include <asio/deferred.hpp>
#else
#include <asio/experimental/append.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/deferred.hpp>
#define CHRONOPOOL_ASIO_EXPERIMENTAL_TOKENS 1
#endif

#include <system_error>
#include <typeinfo>

#ifdef ASIO_NO_TYPEID
#error "chronopool: on standalone Asio it needs RTTI (any_io_executor::target_type, see asio_compat::target)"
#endif

namespace chronopool {
namespace asio_ns = ::asio;
namespace sys_ns {
using std::error_category;
using std::error_code;
using std::error_condition;
using std::system_error;
}  // namespace sys_ns
}  // namespace chronopool

#define CHRONOPOOL_ASIO_NAMESPACE_BEGIN namespace asio {
#define CHRONOPOOL_ASIO_NAMESPACE_END }

// The io_context's scheduler runs a reactor as its task (and blocks in it
// when idle): every platform but IOCP, Windows Runtime and io_uring as the
// default backend.
#if !defined(ASIO_HAS_IOCP) && !defined(ASIO_WINDOWS_RUNTIME) && !defined(ASIO_HAS_IO_URING_AS_DEFAULT)
#define CHRONOPOOL_ASIO_HAS_REACTOR_TASK 1
#endif

#else  // Boost.Asio

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/wait_traits.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

namespace chronopool {
namespace asio_ns = ::boost::asio;
namespace sys_ns {
using ::boost::system::error_category;
using ::boost::system::error_code;
using ::boost::system::error_condition;
using ::boost::system::system_error;
}  // namespace sys_ns
}  // namespace chronopool

#define CHRONOPOOL_ASIO_NAMESPACE_BEGIN namespace boost::asio {
#define CHRONOPOOL_ASIO_NAMESPACE_END }

#if !defined(BOOST_ASIO_HAS_IOCP) && !defined(BOOST_ASIO_WINDOWS_RUNTIME) && \
    !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#define CHRONOPOOL_ASIO_HAS_REACTOR_TASK 1
#endif

#endif

namespace chronopool::detail::asio_compat {

/// @p ex's target executor when it is a @p T, else null. Boost.Asio's
/// any_executor::target<T>() checks the type; standalone Asio 1.22's casts
/// whatever the target is, so the type is checked here first.
template <class T, class AnyExecutor>
const T* target(const AnyExecutor& ex) noexcept {
#ifdef CHRONOPOOL_STANDALONE_ASIO
  if (ex.target_type() != typeid(T)) return nullptr;
#endif
  return ex.template target<T>();
}

#ifdef CHRONOPOOL_ASIO_EXPERIMENTAL_TOKENS
using ::asio::experimental::append;
using ::asio::experimental::as_tuple;
using ::asio::experimental::deferred;
using ::asio::experimental::deferred_t;
#else
using asio_ns::append;
using asio_ns::as_tuple;
using asio_ns::deferred;
using asio_ns::deferred_t;
#endif
}  // namespace chronopool::detail::asio_compat
