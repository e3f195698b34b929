// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-bench: chronopool against Asio's own timers and thread pool.
// The command line, the order of work, and where the output goes; the
// workloads are in workloads/, the repetition logic in driver.cpp.
#include "driver.hpp"
#include "machine.hpp"
#include "report.hpp"
#include "workloads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

void usage(std::FILE* out) {
  fmt::print(out,
             "usage: chronopool-bench [--quick | --big] [--reps R] [--threads T] [--only NAME[,NAME...]] [--json FILE]\n"
             "                        [--variants V[,V...]] [--wakeup-slack US]\n"
             "  --quick        small sizes, for a smoke test in seconds\n"
             "  --big          also the sizes that take minutes and GiBs (timeout at M=10,000,000)\n"
             "  --reps R       repetitions of every variant after one warm-up (default 5)\n"
             "  --threads T    threads of every io_context and pool (default 2)\n"
             "  --only NAMES   run only these workloads (comma-separated)\n"
             "  --json FILE    write every repetition (and the fire lateness CDF) to FILE\n"
             "  --variants V   run only these variants (comma-separated: asio-io, cp-io, asio-pool,\n"
             "                 cp-pool, cp-io-pool, cp-precise, cp-io-precise, cp-pool-task), e.g. to profile\n"
             "                 one side; ratios need both sides\n"
             "  --wakeup-slack US  every chronopool set-up's wake-up slack in microseconds (default: the\n"
             "                 library's, 50 us; 0: exact waits)\n"
             "workloads:\n");
  for (const auto& w : bench::all_workloads()) fmt::print(out, "  {:9} {}\n", w.name, w.what);
}

int to_int(std::string_view flag, std::string_view s, int lo) {
  int v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v < lo)
    throw std::invalid_argument(fmt::format("{} needs an integer >= {}, got '{}'", flag, lo, s));
  return v;
}

bench::options parse(int argc, char** argv) {
  bench::options o;
  o.command_line = "chronopool-bench";
  for (int i = 1; i < argc; ++i) o.command_line += std::string(" ") + argv[i];
  auto value = [&](int& i) -> std::string_view {
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", argv[i]));
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--big") {
      o.big = true;
    } else if (a == "--reps") {
      o.reps = to_int(a, value(i), 1);
    } else if (a == "--threads") {
      o.threads = static_cast<unsigned>(to_int(a, value(i), 1));
    } else if (a == "--json") {
      o.json_path = std::string(value(i));
    } else if (a == "--only") {
      std::stringstream names{std::string(value(i))};
      for (std::string n; std::getline(names, n, ',');) {
        const auto all = bench::all_workloads();
        if (std::none_of(all.begin(), all.end(), [&](const auto& w) { return n == w.name; }))
          throw std::invalid_argument("unknown workload '" + n + "'");
        o.only.push_back(n);
      }
    } else if (a == "--variants") {
      std::stringstream names{std::string(value(i))};
      for (std::string n; std::getline(names, n, ',');) {
        const auto& all = bench::every_variant;
        const auto it = std::find_if(all.begin(), all.end(), [&](bench::variant v) { return n == bench::name(v); });
        if (it == all.end()) throw std::invalid_argument("unknown variant '" + n + "'");
        o.variants.push_back(*it);
      }
    } else if (a == "--wakeup-slack") {
      bench::wakeup_slack = std::chrono::microseconds(to_int(a, value(i), 0));
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else {
      throw std::invalid_argument(fmt::format("unknown argument '{}'", a));
    }
  }
  if (o.quick && o.big) throw std::invalid_argument("--quick and --big exclude each other");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  bench::options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "chronopool-bench: {}\n", e.what());
    usage(stderr);
    return 2;
  }
  try {
    std::vector<bench::bench_case> cases;
    for (const auto& w : bench::all_workloads()) {
      if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), w.name) == o.only.end()) continue;
      for (auto& c : w.cases(o)) {
        if (!o.variants.empty())
          std::erase_if(c.variants, [&](bench::variant v) {
            return std::find(o.variants.begin(), o.variants.end(), v) == o.variants.end();
          });
        if (!c.variants.empty()) cases.push_back(std::move(c));
      }
    }
    // One second of spinning (a fifth with --quick) before the cases, then
    // as long with T threads: the machine's own stalls, the floor under the
    // lateness figures.
    bench::run_context ctx{bench::describe_machine(), bench::measure_spin_floor(o.quick ? 0.2 : 1.0, o.threads),
                           bench::load_average(), "", 0};
    bench::print_header(stdout, ctx, o);
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = bench::run_cases(cases, o);
    ctx.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ctx.load_after = bench::load_average();
    bench::print_tables(stdout, results, o);
    bench::print_footer(stdout, ctx);
    if (o.json_path) bench::write_json(*o.json_path, ctx, results, o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "chronopool-bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
