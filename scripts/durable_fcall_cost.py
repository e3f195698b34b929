#!/usr/bin/env python3
"""Redis's cost per durable function call, per library version, alternated.

usage: durable_fcall_cost.py PORT ROUNDS NAME=FILE,SUFFIX ...
  FILE: a whole function library (src/durable/functions/*.lua concatenated in
  CMake's order, or an older one from git); SUFFIX: v3, v4, or v4h0 (v4 with
  history_length 0), which picks the function names and arguments.
Per round and library, on the redis-server at PORT: FLUSHALL, the library
loaded, N (env N, default 6400) schedules put (env MODE: single = fixed
rate, fired once, as docs/performance.md; oneshot; steady = fixed rate fired
four times, the last measured), claimed 64 per call, acknowledged in
pipelines of 64. With env BULK=1, libraries after v3 put their schedules
through cp_put_many (async_upsert_schedules' call) in calls of 250, v3 (which
has none) one per call as before: the cost of a bulk creation against v3's. Reported per call: commandstats usec, and main-thread CPU
(INFO cpu). With env CG_PID (and CG_DIR) naming a redis-server run under
  valgrind --tool=callgrind --callgrind-out-file=$CG_DIR/cg.%p.out redis-server ...
it reports the instructions executed instead (deterministic), one round.
"""
import socket, sys, statistics, time, os
MODE = os.environ.get('MODE', 'single')
PASSES = 4 if MODE == 'steady' else 1

class R:
    def __init__(s, port):
        s.s = socket.create_connection(("127.0.0.1", port)); s.buf = b""
    def send(s, cmds):
        out = []
        for c in cmds:
            out.append(b"*%d\r\n" % len(c))
            for a in c:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        s.s.sendall(b"".join(out))
    def _line(s):
        while b"\r\n" not in s.buf: s.buf += s.s.recv(1 << 20)
        l, s.buf = s.buf.split(b"\r\n", 1); return l
    def _n(s, n):
        while len(s.buf) < n + 2: s.buf += s.s.recv(1 << 20)
        d, s.buf = s.buf[:n], s.buf[n + 2:]; return d
    def read(s):
        l = s._line(); t, r = l[:1], l[1:]
        if t == b"+": return r.decode()
        if t == b"-": raise RuntimeError(r.decode())
        if t == b":": return int(r)
        if t == b"$":
            n = int(r); return None if n < 0 else s._n(n).decode(errors="replace")
        if t == b"*":
            n = int(r); return None if n < 0 else [s.read() for _ in range(n)]
        raise RuntimeError("bad reply " + repr(l))
    def call(s, *c): s.send([c]); return s.read()
    def pipe(s, cmds): s.send(cmds); return [s.read() for _ in cmds]

def fcall_usec(r):
    info = r.call("INFO", "commandstats")
    for line in info.splitlines():
        if line.startswith("cmdstat_fcall:"):
            kv = dict(x.split("=") for x in line.split(":", 1)[1].split(","))
            return int(kv["usec"]), int(kv["calls"])
    return 0, 0

def cpu_us(r):
    info = r.call("INFO", "cpu")
    kv = dict(l.split(":", 1) for l in info.splitlines() if ":" in l)
    return 1e6 * (float(kv["used_cpu_user_main_thread"]) + float(kv["used_cpu_sys_main_thread"]))

CG = os.environ.get("CG_PID")
CG_DIR = os.environ.get("CG_DIR", "/tmp")
import subprocess, glob
def ir(r):
    """Instructions inside fcallCommand since the last call (callgrind dumps are deltas)."""
    if not CG: return 0.0
    r.call("PING")
    before = set(glob.glob("%s/cg.%s.out*" % (CG_DIR, CG)))
    subprocess.run(["callgrind_control", "-d", CG], check=True, capture_output=True)
    for _ in range(200):
        new = sorted(set(glob.glob("%s/cg.%s.out*" % (CG_DIR, CG))) - before)
        if new: break
        time.sleep(0.05)
    time.sleep(0.1)
    tot = 0
    for f in new:
        for line in open(f):
            if line.startswith("totals:") or line.startswith("summary:"):
                tot = int(line.split()[1]); break
    return float(tot)

def run(r, src, v, n, ns):
    key = "cp:{%s}:due" % ns
    r.call("FLUSHALL"); r.call("FUNCTION", "LOAD", "REPLACE", src)
    res = {}
    def put_args(i):
        if MODE == "steady":
            a = ["job%d" % i, "bench", "p" * 32, "rate", "abs", 1000000 + i, 86400000, "catch_up", 1000000, 0]
        elif MODE == "oneshot":
            a = ["job%d" % i, "bench", "p" * 32, "once", "abs", 1000000 + i, 0, "once", 1, 0]
        else:
            a = ["job%d" % i, "bench", "p" * 32, "rate", "abs", 1000000 + i, 86400000, "once", 1, 0]
        if v != "v3": a.append(0 if v.endswith("h0") else 10)
        return ["FCALL", "cp_put_" + v[:2], 1, key] + a
    def put_many(b, e):
        # put_args' values, padded to the 18 of an item (no policy, no cron).
        items = []
        for i in range(b, e):
            a = put_args(i)[4:]
            items += a + [""] * (18 - len(a))
        return ["FCALL", "cp_put_many_" + v[:2], 1, key] + items
    bulk = os.environ.get("BULK") == "1" and v != "v3"
    r.call("CONFIG", "RESETSTAT")
    ir(r)
    c0 = cpu_us(r)
    if bulk:
        for b in range(0, n, 250): r.call(*put_many(b, min(n, b + 250)))
    else:
        for b in range(0, n, 256): r.pipe([put_args(i) for i in range(b, min(n, b + 256))])
    res["put_cpu"] = (cpu_us(r) - c0, n)
    res["put_ir"] = (ir(r), n)
    res["put"] = fcall_usec(r)
    claim_us = ack_us = 0; fires = 0; ccalls = 0
    for _ in range(PASSES - 1):
        done = 0
        while done < n:
            rep = r.call("FCALL", "cp_claim_" + v[:2], 1, key, "bench-owner", 600000, 64)
            r.pipe([["FCALL", "cp_ack_" + v[:2], 1, key, f[0], f[2], rep[2]] for f in rep[3:]]); done += len(rep) - 3
    c0 = cpu_us(r)
    ir(r); cir = air = 0
    if CG:
        held = []; epoch = None
        while len(held) < n:
            rep = r.call("FCALL", "cp_claim_" + v[:2], 1, key, "bench-owner", 600000, 64)
            epoch = rep[2]; held += rep[3:]
        cir = ir(r)
        for b in range(0, n, 64):
            acks = r.pipe([["FCALL", "cp_ack_" + v[:2], 1, key, f[0], f[2], epoch] for f in held[b:b + 64]])
            assert all(a[0] == 1 for a in acks), acks[:2]
        air = ir(r); fires = n
    while fires < n:
        r.call("CONFIG", "RESETSTAT")
        rep = r.call("FCALL", "cp_claim_" + v[:2], 1, key, "bench-owner", 600000, 64)
        u, _ = fcall_usec(r); claim_us += u; ccalls += 1
        epoch = rep[2]; fs = rep[3:]
        if not fs: raise RuntimeError("nothing claimed")
        r.call("CONFIG", "RESETSTAT")
        acks = r.pipe([["FCALL", "cp_ack_" + v[:2], 1, key, f[0], f[2], epoch] for f in fs])
        assert all(a[0] == 1 for a in acks), acks[:2]
        u, _ = fcall_usec(r); ack_us += u; fires += len(fs)
    res["fire_cpu"] = (cpu_us(r) - c0, fires)
    res["claim"] = (claim_us, fires)
    res["claim_ir"] = (cir, fires); res["ack_ir"] = (air, fires); res["fire_ir"] = (cir + air, fires); res["ack"] = (ack_us, fires)
    return {k: u / c for k, (u, c) in res.items()}

def main():
    port, rounds = int(sys.argv[1]), int(sys.argv[2])
    libs = []
    for a in sys.argv[3:]:
        name, rest = a.split("=", 1); path, v = rest.split(",")
        libs.append((name, open(path).read(), v))
    n = int(os.environ.get('N', '6400'))
    r = R(port)
    data = {name: [] for name, _, _ in libs}
    for rnd in range(0 if CG else -1, rounds):
        order = libs if rnd % 2 == 0 else list(reversed(libs))
        for name, src, v in order:
            x = run(r, src, v, n, "cost%d" % rnd)
            x["fire"] = x["claim"] + x["ack"]
            if rnd >= 0: data[name].append(x)
            print("round %d %-6s " % (rnd, name) + " ".join("%s %.2f" % kv for kv in x.items()), file=sys.stderr, flush=True)
    base = libs[0][0]
    print("| per call, median µs (Redis commandstats) | " + " | ".join(n for n, _, _ in libs) + " | " +
          " | ".join("%s/%s (median of ratios)" % (n, base) for n, _, _ in libs[1:]) + " |")
    for k in (["put_ir", "claim_ir", "ack_ir", "fire_ir"] if CG else ["put", "claim", "ack", "fire", "put_cpu", "fire_cpu"]):
        cells = ["%.1f" % statistics.median(d[k] for d in data[n]) for n, _, _ in libs]
        ratios = ["%+.1f %%" % (100 * (statistics.median(a[k] / b[k] for a, b in zip(data[n], data[base])) - 1)) for n, _, _ in libs[1:]]
        print("| %s | %s | %s |" % (k, " | ".join(cells), " | ".join(ratios)))

main()
