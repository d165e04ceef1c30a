"""What a search found, as text: coverage over runs, the corpus, what was
never reached, and each failure identity with its replay and shrink commands."""

from __future__ import annotations

from seedbed._harness.search._engine import ExploreSpec, Search

_SHOWN = 20


def curve(search: Search) -> list[tuple[int, int]]:
    """(runs, features reached within them) at 1, 2, 5, 10, 20, 50, ... runs and at the end."""
    firsts = sorted(search.state.seen.values())
    total = search.state.runs
    points: list[int] = []
    step = 1
    while step < total:
        points.extend(p for p in (step, 2 * step, 5 * step) if p < total)
        step *= 10
    points.append(total)
    return [(runs, sum(1 for first in firsts if first < runs)) for runs in points if runs > 0]


def summary_lines(spec: ExploreSpec, search: Search) -> list[str]:
    state = search.state
    resumed = f", resumed after {search.resumed}" if search.resumed else ""
    lines = [
        f"explored {spec.target} (explorer seed {spec.seed}): {state.runs} runs{resumed}, "
        f"{search.ran} now in {search.seconds:.1f}s; stopped: {search.stopped or 'interrupted'}",
        f"features reached: {len(state.seen)}"
        + (f"; best values: {_extremes(search)}" if state.extremes else ""),
        "  runs -> features: " + ", ".join(f"{runs} -> {count}" for runs, count in curve(search)),
        f"corpus: {len(state.corpus)} runs kept ({spec.out / 'corpus'})",
        "  by kind of run (runs/found something/failed): " + ", ".join(
            f"{kind} {runs}/{found}/{failed}"
            for kind, (runs, found, failed) in sorted(state.kinds.items())),
    ]  # fmt: skip
    lines.extend(_never(search))
    lines.extend(_failures(spec, search))
    lines.extend(_rechecks(spec, search))
    return lines


def _rechecks(spec: ExploreSpec, search: Search) -> list[str]:
    """How many runs ran twice in one process (see `_recheck`), and any that differed."""
    checker = search.rechecks
    if checker.share <= 0:
        return ["recheck: off: no run was run twice"]
    how = f"1 in {checker.share} and the first, in the same process after other runs"
    differed = checker.differed
    lines = [f"rechecked {checker.checked} runs ({how}): "
             + (f"{checker.differed_count} ran differently: nondeterminism, a failure"
                if differed else "each the same")]  # fmt: skip
    if checker.differed_count > len(differed):
        lines.append(f"  (the first {len(differed)} of them:)")
    for line in differed:
        lines.append(f"  run {line['index']} (seed {line['seed']}): "
                     + "; ".join(line["differences"]))  # fmt: skip
        if line.get("plan") == "fresh":  # a branch replays from its parent's choices
            lines.append(f"    replay: {spec.runner} run {spec.target} --seed {line['seed']}")
    return lines


def _extremes(search: Search) -> str:
    return ", ".join(f"{key} = {value:g}" for key, value in search.state.extremes.items())


def _never(search: Search) -> list[str]:
    never = search.state.never_reached()
    if not never:
        return ["never reached: nothing (of what the runs could reach)"]
    lines = [f"never reached ({len(never)}):"]
    lines.extend(f"  {feature}" for feature in never[:_SHOWN])
    if len(never) > _SHOWN:
        lines.append(f"  ... and {len(never) - _SHOWN} more")
    return lines


def _failures(spec: ExploreSpec, search: Search) -> list[str]:
    state = search.state
    if not state.buckets:
        return ["failures: none"]
    lines = [f"failures: {state.failed_runs} runs in {len(state.buckets)} identities"]
    for bucket in sorted(state.buckets.values(), key=lambda b: b.first):
        lines.append(f"  {bucket.bucket}: first at run {bucket.first}, {bucket.count} runs")
        if bucket.file:
            shrunk = bucket.file.removesuffix(".json") + ".shrunk.json"
            lines.append(f"    replay: {spec.runner} run {spec.target} --choices {bucket.file}")
            lines.append(f"    shrink: {spec.runner} shrink {spec.target} --choices "
                         f"{bucket.file} --out {shrunk}")  # fmt: skip
    return lines
