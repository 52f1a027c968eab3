#!/usr/bin/env python3
"""Summarises callgrind output files of bench/instr/calls.c (issue 14's
instruction counts): per file (one rank), instructions per collective call
in all, in waiting (strata_backoff, strata_liveness_due and
strata_peer_check_alive, inclusive: the cost of polls that found nothing),
the rest ("work"), and failed polls per call (calls of strata_backoff);
with --top N, the N functions of most self cost per call.

    callgrind-summary.py CALLS [--top N] FILE...
"""
import re
import sys

WAIT = ("strata_backoff", "strata_liveness_due", "strata_peer_check_alive")


def parse(path):
    names = {}          # compressed id -> name, per kind of name
    self_cost = {}      # function -> self Ir
    incl_calls = {}     # callee -> (calls, inclusive Ir of those calls)
    total = 0
    fn = None
    pending_call = None  # (callee, count) waiting for its cost line

    def name_of(kind, spec):
        m = re.match(r"\((\d+)\)(?: (.*))?$", spec)
        if not m:
            return spec
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names.get(key, spec)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("summary:"):
                total = int(line.split()[1])
            elif line.startswith("fn="):
                fn = name_of("fn", line[3:])
            elif line.startswith("cfn="):
                callee = name_of("fn", line[4:])
            elif line.startswith("calls="):
                pending_call = (callee, int(line[6:].split()[0]))
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    c, n = pending_call
                    calls, incl = incl_calls.get(c, (0, 0))
                    incl_calls[c] = (calls + n, incl + cost)
                    pending_call = None
                else:
                    self_cost[fn] = self_cost.get(fn, 0) + cost
            elif re.match(r"(fl|fi|fe|ob|cob|cfi|cfl)=", line):
                # Register compressed names of files/objects (not needed, but
                # keep ids consistent).
                pass
    return total, self_cost, incl_calls


def main():
    args = sys.argv[1:]
    calls = float(args.pop(0))
    top = 0
    if args and args[0] == "--top":
        top = int(args[1])
        args = args[2:]
    for path in args:
        total, self_cost, incl = parse(path)
        # Inclusive cost of the wait functions, as called from outside them
        # (strata_backoff calls nothing of the others).
        wait = sum(incl.get(w, (0, 0))[1] for w in WAIT)
        polls = incl.get("strata_backoff", (0, 0))[0]
        print(f"{path}: {total / calls:.1f} instr/call, waiting {wait / calls:.1f}, "
              f"work {(total - wait) / calls:.1f}, failed polls {polls / calls:.2f}/call")
        if top:
            for name, c in sorted(self_cost.items(), key=lambda kv: -kv[1])[:top]:
                print(f"    {c / calls:9.1f}  {name}")


if __name__ == "__main__":
    main()
