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
    time.sleep(0.3)  # every thread reaches its wait
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
