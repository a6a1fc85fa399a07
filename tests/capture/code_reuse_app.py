"""A Python program whose hot function's code object lies where another code
object, already sampled, was freed: the host sampler must name the new one
(host_sampling_test.py, test_reused_code_address; issue 36).

usage: code_reuse_app.py SECONDS

A decoy function `decoy` (file decoy.py) spins 0.3 s, so the sampler reads
its code object; it is freed; then `main` (this file) is compiled from the
same template (same size, so the allocator hands out the same address),
until its code object has the decoy's address (a few tries at most). main()
then spins SECONDS. Prints the window and whether the address was reused.
"""
import gc
import json
import os
import sys
import time

TEMPLATE = ("import time\n"
            "def {name}(seconds):\n"
            "    end = time.monotonic() + seconds\n"
            "    x = 0\n"
            "    while time.monotonic() < end:\n"
            "        x += 1\n"
            "    return x\n")


def make(name, filename):
    ns = {}
    exec(compile(TEMPLATE.format(name=name), filename, "exec"), ns)
    return ns[name]


def aliased_main(seconds):
    keep = []  # candidates that missed the address: held so it stays free
    for _ in range(50):
        decoy = make("decoy", "decoy.py")
        address = id(decoy.__code__)
        decoy(0.3)
        del decoy
        gc.collect()
        main = make("main", os.path.abspath(__file__))
        if id(main.__code__) == address:
            return main, True
        keep.append(main)
    return main, False


def run():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    main, reused = aliased_main(seconds)
    start = time.time_ns()
    main(seconds)
    end = time.time_ns()
    print(json.dumps({"pid": os.getpid(), "start_ns": start, "end_ns": end, "reused": reused}),
          flush=True)


if __name__ == "__main__":
    run()
