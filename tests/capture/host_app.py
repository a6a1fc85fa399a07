"""A CPU-only Python program with a known hot function and blocked threads,
for the host-sampling test (host_sampling_test.py); no GPU, no CUDA.

usage: host_app.py SECONDS [NVTX_SHIM.so]

Threads (OS names set with prctl, as Python's threading names are not OS names):
  main            spins in hot_function() for SECONDS inside an NVTX range "hot"
                  (when the shim library is given); prints the window as JSON
  blocked-queue   waits on queue.Queue().get()           -> blocked on a lock
  blocked-pipe    os.read() on a pipe nobody writes      -> blocked on I/O (pipe)
  sleeper         time.sleep()                           -> sleeping
"""
import ctypes
import json
import os
import queue
import sys
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME = 15


def set_os_name(name):
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()), 0, 0, 0)


def wait_on_queue(q):
    set_os_name("blocked-queue")
    q.get()


def wait_on_pipe(fd):
    set_os_name("blocked-pipe")
    os.read(fd, 1)


def sleep_long(stop):
    set_os_name("sleeper")
    while not stop.is_set():
        time.sleep(0.5)


def blocked(tid, fd=None):
    """(syscall line, CPU ns) of thread `tid`: /proc's "NR arg0 ..." while it sits
    in a system call, "running" otherwise."""
    with open("/proc/self/task/%d/syscall" % tid) as f:
        call = f.read().split()
    with open("/proc/self/task/%d/schedstat" % tid) as f:
        cpu = int(f.read().split()[0])
    in_call = bool(call) and call[0] != "running" and call[0] != "-1"
    return (in_call and (fd is None or call[1:2] == [hex(fd)])), cpu


def wait_until_blocked(waits, timeout=60.0):
    """Until every (thread, fd) in `waits` sits in a system call (on fd, when
    given) and has used no CPU across two looks 20 ms apart: it is in its wait,
    not on its way (nor waiting for the GIL, which this thread leaves free)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        first = [blocked(t.native_id, fd) for t, fd in waits]
        time.sleep(0.02)
        second = [blocked(t.native_id, fd) for t, fd in waits]
        if all(a[0] and b[0] and a[1] == b[1] for a, b in zip(first, second)):
            return
    raise SystemExit("host_app: threads did not reach their waits in %.0f s" % timeout)


def hot_function(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(1000):
            x += i * i
    return x


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    shim = ctypes.CDLL(sys.argv[2]) if len(sys.argv) > 2 else None
    q = queue.Queue()
    r, w = os.pipe()
    stop = threading.Event()
    threads = [threading.Thread(target=wait_on_queue, args=(q,)),
               threading.Thread(target=wait_on_pipe, args=(r,)),
               threading.Thread(target=sleep_long, args=(stop,))]
    for t in threads:
        t.start()
    wait_until_blocked([(threads[0], None), (threads[1], r), (threads[2], None)])
    if shim:
        shim.shim_push(b"hot")
    start = time.time_ns()
    hot_function(seconds)
    end = time.time_ns()
    if shim:
        shim.shim_pop()
    q.put(None)
    os.write(w, b"x")
    stop.set()
    for t in threads:
        t.join()
    print(json.dumps({"pid": os.getpid(), "hot_start_ns": start, "hot_end_ns": end}), flush=True)


if __name__ == "__main__":
    main()
