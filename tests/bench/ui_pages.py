#!/usr/bin/env python3
"""Times the web UI's pages against a running mossd: p50 and p95 per page.

Usage: ui_pages.py ADDR TOKEN_FILE [--rounds N]

It signs in as `moss ui` does (POST /ui/login-code with the token, then the one-time address),
picks the largest workspace of each family from GET /workspaces, and requests every page
--rounds times in turn (default 30), one at a time. Fill the daemon first, e.g. with
`moss bench --against-running --search --capsules 100000`, `--memory --memories 100000` and
`--reasoning --nodes 10000`, which keep what they write.
"""

import argparse
import json
import statistics
import time
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("token_file")
    ap.add_argument("--rounds", type=int, default=30)
    a = ap.parse_args()
    base = a.addr if a.addr.startswith("http") else f"http://{a.addr}"
    token = open(a.token_file).read().strip()
    api = lambda method, path: json.load(urllib.request.urlopen(urllib.request.Request(
        base + path, method=method, headers={"Authorization": f"Bearer {token}"})))
    code = api("POST", "/ui/login-code")["path"]
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(base + code)
        raise SystemExit("the sign-in address did not redirect")
    except urllib.error.HTTPError as e:
        cookie = e.headers["Set-Cookie"].split(";")[0]
    spaces = api("GET", "/workspaces")["items"]
    best = lambda fam: max(spaces, key=lambda w: w["counts"][fam])["workspace"]
    caps, reasoning, tasks, mems = (best(f) for f in ("capsules", "reasoning", "tasks", "memories"))
    q = urllib.parse.quote
    def get(path):
        req = urllib.request.Request(base + path, headers={"Cookie": cookie})
        t = time.perf_counter()
        with urllib.request.urlopen(req) as r:
            body = r.read()
        return (time.perf_counter() - t) * 1000, body.decode()
    # One capsule and one task to open: the first links of their lists.
    _, listing = get(f"/ui/w/{q(caps)}/capsules")
    capsule = listing.split(f'href="/ui/w/{q(caps)}/capsules/', 1)[1].split('"', 1)[0]
    _, tlist = get(f"/ui/w/{q(tasks)}/tasks")
    task = tlist.split(f'href="/ui/w/{q(tasks)}/tasks/', 1)
    task = task[1].split('"', 1)[0] if len(task) > 1 else None
    pages = {
        "workspaces": "/ui/",
        "search (rare word)": "/ui/search?q=zyxwvut",
        "search (common word)": "/ui/search?q=the",
        "capsules list": f"/ui/w/{q(caps)}/capsules",
        "capsules list, page 100": f"/ui/w/{q(caps)}/capsules?offset=5000",
        "capsule": f"/ui/w/{q(caps)}/capsules/{capsule}",
        "graph (main/graph)": f"/ui/w/{q(reasoning)}/graph?branch=main&doc=graph",
        "memories (newest)": f"/ui/w/{q(mems)}/memories",
        "memories (recall)": f"/ui/w/{q(mems)}/memories?q=cache",
        "timeline": f"/ui/w/{q(caps)}/timeline",
        "tasks list": f"/ui/w/{q(tasks)}/tasks",
    }
    if task:
        pages["task"] = f"/ui/w/{q(tasks)}/tasks/{task}"
    # A node's versions and one context's memories: the first links of their pages.
    _, graph = get(f"/ui/w/{q(reasoning)}/graph?branch=main&doc=graph")
    node = graph.split(f'href="/ui/w/{q(reasoning)}/graph/node?', 1)
    if len(node) > 1:
        pages["graph node versions"] = (f"/ui/w/{q(reasoning)}/graph/node?"
                                        + node[1].split('"', 1)[0].replace("&amp;", "&"))
    _, memories = get(f"/ui/w/{q(mems)}/memories")
    ctx = memories.split(f'href="/ui/w/{q(mems)}/memories?ctx=', 1)
    if len(ctx) > 1:
        first = ctx[1].split('"', 1)[0]
        pages["memories (one context)"] = f"/ui/w/{q(mems)}/memories?ctx={first}"
    times = {name: [] for name in pages}
    for _ in range(a.rounds):
        for name, path in pages.items():
            times[name].append(get(path)[0])
    print(f"{'page':28} {'p50 ms':>8} {'p95 ms':>8}")
    for name, ts in times.items():
        ts.sort()
        p95 = ts[min(len(ts) - 1, int(round(0.95 * (len(ts) - 1))))]
        print(f"{name:28} {statistics.median(ts):8.1f} {p95:8.1f}")
    print(f"(workspaces: capsules {caps}, reasoning {reasoning}, tasks {tasks}, memories {mems}; "
          f"{a.rounds} rounds)")


if __name__ == "__main__":
    main()
