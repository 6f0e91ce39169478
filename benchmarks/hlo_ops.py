"""Operations per round in the compiled loop body: issue 36's proxy for a GPU's kernels per round
where no device is lent.

`python -m benchmarks.hlo_ops [--runs R] [--horizon T] [--out DIR]` compiles, for ogd-full, linucb
and ftpsl, oslr's program (the throughput row's chunk, as `oslr.simulate` compiles it) and the
plain JAX scan of the same study (`benchmarks.plain_jax`), and counts the operations XLA left in
the body of the loop over rounds, following nested loops (times their trip count), conditionals
(every branch, as a round that takes each would run them) and calls. On a GPU each such operation is
roughly one kernel launch (a fusion, a matrix product, a sort, a library call); the CPU backend
fuses less aggressively, so the counts are a proxy to drive down, not the GPU's kernel count.
Writes hlo_ops.json and HLO-OPS.md to DIR. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

#: instructions that move no data at run time (tuple plumbing, constants, parameters)
FREE = frozenset({"parameter", "get-tuple-element", "tuple", "constant", "bitcast",
                  "after-all", "partition-id", "replica-id", "opt-barrier"})
#: instructions whose called computations run as part of the round (fusions' and reductions'
#: sub-computations are inside one kernel and are not followed)
CONTROL = {"while": ("body", "condition"), "conditional": ("branch_computations",
                                                           "true_computation",
                                                           "false_computation"),
           "call": ("to_apply",)}

_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*\(.*\{\s*$")


def _skip_type(text: str) -> str:
    """`text` after the result type at its start (a shape, or a parenthesised tuple)."""
    text = text.lstrip()
    if not text.startswith("("):
        return text.split(" ", 1)[1] if " " in text else ""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return text[i + 1:]
    return ""


def parse(hlo: str) -> tuple[dict[str, list[tuple[str, str]]], str]:
    """{computation: [(opcode, the instruction's text)]} of an HLO module's text, and the name
    of its entry computation."""
    comps: dict[str, list[tuple[str, str]]] = {}
    entry, current = "", None
    for line in hlo.splitlines():
        head = _HEADER.match(line)
        if head and not line.startswith(" "):
            current = head.group(1)
            comps[current] = []
            entry = current if line.startswith("ENTRY") else entry
            continue
        if current is None or " = " not in line or not line.startswith(" "):
            continue
        rest = _skip_type(line.split(" = ", 1)[1])
        op = re.match(r"\s*([a-z][\w\-]*)\(", rest)
        if op:
            comps[current].append((op.group(1), line))
    return comps, entry


def _called(op: str, text: str) -> list[str]:
    names = []
    for attr in CONTROL.get(op, ()):
        m = re.search(attr + r"=\{?([^,}\s]+(?:,\s*%?[\w.\-]+)*)\}?", text)
        if m:
            names += [n.strip().lstrip("%") for n in m.group(1).split(",")]
    return names


def trip_count(text: str) -> int:
    """A while instruction's trip count as XLA knows it (1 when unknown)."""
    m = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', text)
    return int(m.group(1)) if m else 1


def count(comps: dict, name: str, seen: frozenset = frozenset()) -> Counter:
    """Operations of computation `name` by opcode, with those of the computations its loops
    (times their known trip count), conditionals (every branch) and calls run."""
    out: Counter = Counter()
    for op, text in comps.get(name, ()):
        if op in FREE:
            continue
        out[op] += 1
        times = trip_count(text) if op == "while" else 1
        for sub in _called(op, text):
            if sub not in seen:
                sub_ops = count(comps, sub, seen | {name})
                out += Counter({k: v * times for k, v in sub_ops.items()})
    return out


def round_loop(comps: dict, entry: str, horizon: int) -> tuple[str, int]:
    """(body, trip count) of the loop over rounds: the while loop with `horizon` trips reached
    from the entry (directly or through a loop over checkpoint segments, whose trips times the
    inner loop's make `horizon`), the one with the most operations if several."""
    found = []

    def visit(name: str, outer: int) -> None:
        for op, text in comps.get(name, ()):
            if op == "while":
                body = re.search(r"body=%?([\w.\-]+)", text).group(1)
                trips = trip_count(text) * outer
                if trips == horizon:
                    found.append((sum(count(comps, body).values()), body, trip_count(text)))
                elif trips < horizon:
                    visit(body, trips)

    visit(entry, 1)
    if not found:
        raise ValueError(f"no loop of {horizon} rounds in the program")
    _, body, trips = max(found)
    return body, trips


def summary(hlo: str, horizon: int) -> dict:
    """Operations per round of a compiled program's text (of `horizon` rounds): total, fusions,
    matrix products (dot / convolution), library calls (custom-call), sorts, control flow
    (while, conditional, call), the rest; an inner loop's operations count once per trip."""
    comps, entry = parse(hlo)
    ops = count(comps, round_loop(comps, entry, horizon)[0])
    main = {"fusion": ops["fusion"], "dot": ops["dot"] + ops["convolution"],
            "custom_call": ops["custom-call"], "sort": ops["sort"],
            "control": ops["while"] + ops["conditional"] + ops["call"]}
    return {"ops_per_round": sum(ops.values()), **main,
            "other": sum(ops.values()) - sum(main.values())}


def measure(name: str, runs: int, horizon: int) -> dict:
    import jax
    import jax.numpy as jnp

    from benchmarks import plain_jax
    from benchmarks.cases import BY_NAME
    from benchmarks.throughput import build

    lowered = build(BY_NAME[name], runs, horizon)[0]
    row = {"learner": name, "runs": runs, "T": horizon}
    row.update({f"oslr_{k}": v for k, v in summary(lowered.compile().as_text(), horizon).items()})
    study, data = plain_jax.program(name, runs, horizon)
    plain = jax.jit(study).lower(jnp.asarray(0, jnp.uint32), *data).compile().as_text()
    row.update({f"plain_{k}": v for k, v in summary(plain, horizon).items()})
    return row


def main(argv=None) -> list[dict]:
    from benchmarks.machine import machine
    from benchmarks.throughput import markdown_table

    parser = argparse.ArgumentParser(prog="python -m benchmarks.hlo_ops", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", default="ogd-full,linucb,ftpsl")
    parser.add_argument("--runs", type=int, default=256)
    parser.add_argument("--horizon", type=int, default=200)
    parser.add_argument("--out", default=None, help="folder for hlo_ops.json and HLO-OPS.md")
    args = parser.parse_args(argv)
    rows = [measure(n, args.runs, args.horizon) for n in args.learners.split(",")]
    for row in rows:
        print(json.dumps(row), flush=True)
    if args.out:
        stamp = machine()
        suffix = "" if stamp["platform"] == "cpu" else f"-{stamp['platform']}"
        out = Path(args.out)
        (out / f"hlo_ops{suffix}.json").write_text(json.dumps({"machine": stamp, "rows": rows},
                                                              indent=1))
        (out / f"HLO-OPS{suffix}.md").write_text("\n".join([
            "# Operations per round in the compiled loop body\n",
            f"`python -m benchmarks.hlo_ops --runs {args.runs} --horizon {args.horizon}`, "
            f"{stamp['platform']}, jax {stamp.get('jax')}, {stamp.get('date')}.\n",
            "Operations XLA left in the body of the loop over rounds (`benchmarks/hlo_ops.py`: "
            "nested loops counted per trip, every branch of a conditional), for oslr's program and "
            "the plain JAX scan of the same study: on a GPU each is about one kernel launch, so "
            "this is issue 36's proxy for kernels per round where no device is lent.\n",
            markdown_table(rows)]))
    return rows


if __name__ == "__main__":
    main()
