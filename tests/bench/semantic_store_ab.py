#!/usr/bin/env python3
"""Store throughput with semantic search on against off: `moss bench --memory` in pairs.

Usage: semantic_store_ab.py MOSS MODEL_DIR [--pairs 3] [--duration 10] [--clients 32]
                            [--memories 1000]

Each run is `moss bench --memory --json` on a daemon of the benchmark's own (a fresh home,
deleted afterwards): run A with `embeddings.model_dir` set to MODEL_DIR in the copied
config.json, run B without, interleaved A B A B ... (--pairs pairs), so that drift in the
machine's load falls on both. It prints each run's capsule_store and memory_store throughput,
the medians, and the ratio on/off of the medians (embedding runs off the write path, in the
background at idle priority: the target is at least 0.95).

MOSS is the `moss` binary (its `mossd` next to it); the homes are temporary directories.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile


def run(moss, home, args):
    env = dict(os.environ, MOSS_HOME=home)
    env.pop("MOSS_ADDR", None)
    cmd = [
        moss,
        "bench",
        "--memory",
        "--json",
        "--clients",
        str(args.clients),
        "--duration",
        str(args.duration),
        "--memories",
        str(args.memories),
    ]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return r["capsule_store"]["throughput"], r["memory_store"]["throughput"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("moss")
    ap.add_argument("model_dir")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--memories", type=int, default=1000)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as on, tempfile.TemporaryDirectory() as off:
        with open(os.path.join(on, "config.json"), "w") as f:
            json.dump({"embeddings": {"model_dir": args.model_dir}}, f)
        runs = {"on": [], "off": []}
        for i in range(args.pairs):
            for name, home in (("on", on), ("off", off)):
                cap, mem = run(args.moss, home, args)
                runs[name].append((cap, mem))
                print(f"pair {i + 1} {name:<3} capsule_store {cap:8.0f}/s  memory_store {mem:8.0f}/s",
                      flush=True)
    med = {
        name: (statistics.median(c for c, _ in rs), statistics.median(m for _, m in rs))
        for name, rs in runs.items()
    }
    for i, op in enumerate(("capsule_store", "memory_store")):
        on_v, off_v = med["on"][i], med["off"][i]
        print(f"{op:<14} median on {on_v:8.0f}/s  off {off_v:8.0f}/s  on/off {on_v / off_v:.3f}")


if __name__ == "__main__":
    main()
