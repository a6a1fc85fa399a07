"""A CPU-only Python program whose threads come and go as fast as they can,
for the host-sampling test (host_sampling_test.py, test_thread_churn; issue
36): thread states are freed and their memory reused while the sampler walks
the interpreter's list of them.

usage: thread_churn_app.py SECONDS

Four spawner threads start and join short threads in a loop; the main thread
waits in churn_main() meanwhile. Prints the main thread's window and how many
threads were started.
"""
import json
import os
import sys
import threading
import time


def short_work():
    x = 0
    for i in range(50):
        x += i
    return x


def spawner(end, counts):
    n = 0
    while time.monotonic() < end:
        t = threading.Thread(target=short_work)
        t.start()
        t.join()
        n += 1
    counts.append(n)


def churn_main(end):
    # Mostly asleep: the spawners get the GIL (churn as fast as threads go).
    while time.monotonic() < end:
        time.sleep(0.005)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    end = time.monotonic() + seconds
    counts = []
    spawners = [threading.Thread(target=spawner, args=(end, counts)) for _ in range(4)]
    start = time.time_ns()
    for s in spawners:
        s.start()
    churn_main(end)
    stop = time.time_ns()
    for s in spawners:
        s.join()
    print(json.dumps({"pid": os.getpid(), "start_ns": start, "end_ns": stop, "threads": sum(counts)}),
          flush=True)


if __name__ == "__main__":
    main()
