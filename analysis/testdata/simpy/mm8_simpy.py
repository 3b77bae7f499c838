#!/usr/bin/env python3
"""M/M/8 with retries in plain SimPy: the model of mm8.yaml, for BenchmarkSimPy.

Both this script and mm8.yaml (mayday) model exactly this:
- N customers (default 200,000) arrive as a Poisson process (default 6.4/s).
- Each needs one successful attempt at a service with C servers (default 8), a FIFO queue
  without limit in front of them and exponential service times (default mean 1 s).
- Each attempt fails fast with probability P (default 0.2), drawn when it is sent. A fast
  failure answers at once: it neither queues nor holds a server and takes no time, as a
  transient fault does in mayday. Only successful attempts reach the servers.
- After a fast failure the customer waits a fixed BACKOFF (default 1 s) and tries again;
  after K failed attempts (default 4) it leaves unserved.
- Nothing else takes time and there is no timeout.

No tracing: only the simulation and three tallies. It prints which SimPy it ran on, the
completed customers, their mean time in system (arrival to the end of service) with a
batch-means standard error (the customers in arrival order cut into BATCHES equal runs; the
standard deviation of the batch means over sqrt(BATCHES)), the total attempts, and the
seconds the simulation took inside this process.

It runs with SimPy 3 or 4 (`import simpy`, Debian's python3-simpy3) and, when that is
missing, with SimPy 2 (`from SimPy.Simulation import ...`, Debian's python3-simpy);
--api forces one. Arrivals, failures and service times draw from three random streams
seeded from --seed.
"""

import argparse
import math
import random
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--customers", type=int, default=200000)
    ap.add_argument("--rate", type=float, default=6.4, help="arrivals per second")
    ap.add_argument("--servers", type=int, default=8)
    ap.add_argument("--service", type=float, default=1.0, help="mean service time, seconds")
    ap.add_argument("--fail", type=float, default=0.2, help="fast-failure probability per attempt")
    ap.add_argument("--backoff", type=float, default=1.0, help="fixed wait after a fast failure, seconds")
    ap.add_argument("--attempts", type=int, default=4, help="attempts per customer, the first included")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--api", choices=["auto", "simpy3", "simpy2"], default="auto")
    a = ap.parse_args()
    if a.customers < a.batches or a.batches < 2:
        ap.error("need at least 2 batches and at least one customer per batch")
    return a


class Tally:
    """What both SimPy versions record: time in system per customer, in arrival order."""

    def __init__(self, n):
        self.tis = [None] * n  # None: left unserved
        self.attempts = 0


class Streams:
    def __init__(self, seed):
        self.arrival = random.Random(seed * 3 + 0)
        self.fail = random.Random(seed * 3 + 1)
        self.service = random.Random(seed * 3 + 2)


def run_simpy3(a, tally):
    import simpy

    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=a.servers)
    rng = Streams(a.seed)

    def customer(i):
        arrived = env.now
        for k in range(a.attempts):
            tally.attempts += 1
            if rng.fail.random() < a.fail:
                if k + 1 < a.attempts:
                    yield env.timeout(a.backoff)
                continue
            with servers.request() as req:
                yield req
                yield env.timeout(rng.service.expovariate(1.0 / a.service))
            tally.tis[i] = env.now - arrived
            return

    def source():
        for i in range(a.customers):
            yield env.timeout(rng.arrival.expovariate(a.rate))
            env.process(customer(i))

    env.process(source())
    env.run()
    return "simpy %s (import simpy)" % getattr(simpy, "__version__", "3+")


def run_simpy2(a, tally):
    from SimPy.Simulation import Process, Resource, activate, hold, initialize, now, release, request, simulate

    initialize()
    servers = Resource(capacity=a.servers)
    rng = Streams(a.seed)

    class Customer(Process):
        def visit(self, i):
            arrived = now()
            for k in range(a.attempts):
                tally.attempts += 1
                if rng.fail.random() < a.fail:
                    if k + 1 < a.attempts:
                        yield hold, self, a.backoff
                    continue
                yield request, self, servers
                yield hold, self, rng.service.expovariate(1.0 / a.service)
                yield release, self, servers
                tally.tis[i] = now() - arrived
                return

    class Source(Process):
        def generate(self):
            for i in range(a.customers):
                yield hold, self, rng.arrival.expovariate(a.rate)
                c = Customer()
                activate(c, c.visit(i))

    src = Source()
    activate(src, src.generate())
    simulate(until=1e18)  # SimPy 2 needs an end; the run ends when the events do
    import SimPy

    return "SimPy %s (from SimPy.Simulation import ...)" % getattr(SimPy, "__version__", "2")


def pick(api):
    if api in ("auto", "simpy3"):
        try:
            import simpy  # noqa: F401

            return run_simpy3
        except ImportError:
            if api == "simpy3":
                sys.exit("mm8_simpy.py: SimPy 3 (import simpy) is not installed: apt-get install python3-simpy3")
    try:
        import SimPy.Simulation  # noqa: F401

        return run_simpy2
    except ImportError:
        sys.exit("mm8_simpy.py: SimPy is not installed: apt-get install python3-simpy python3-simpy3")


def batch_means(tis, batches):
    """Mean time in system of the served customers and its batch-means standard error."""
    n = len(tis)
    sums, counts = [0.0] * batches, [0] * batches
    for i, t in enumerate(tis):
        if t is not None:
            b = i * batches // n
            sums[b] += t
            counts[b] += 1
    done = sum(counts)
    if done == 0 or min(counts) == 0:
        return done, float("nan"), float("nan")
    mean = sum(sums) / done
    bm = [s / c for s, c in zip(sums, counts)]
    m = sum(bm) / batches
    var = sum((x - m) ** 2 for x in bm) / (batches - 1)
    return done, mean, math.sqrt(var / batches)


def main():
    a = parse_args()
    run = pick(a.api)
    tally = Tally(a.customers)
    t0 = time.perf_counter()
    which = run(a, tally)
    run_s = time.perf_counter() - t0
    done, mean, se = batch_means(tally.tis, a.batches)
    print("simpy", which)
    print("customers", a.customers)
    print("completed", done)
    print("mean_time_in_system_s %.6f" % mean)
    print("se_time_in_system_s %.6f" % se)
    print("attempts", tally.attempts)
    print("run_s %.3f" % run_s)


if __name__ == "__main__":
    main()
