"""BFCL v4 through pheron-tui's planning path: how good are the tool calls?

Run: python bench/bfcl.py [--provider llamacpp|mlx] [--model bundled] [--constrained on|off]
                          [--free-start on|off]
                          [--categories simple_python,multiple,irrelevance,live_simple]
                          [--limit N] [--ids ID,ID…] [--out FILE.jsonl [--resume]]

The test data are the JSON files of the PyPI package ``bfcl-eval``, fetched once with
``pip download --no-deps`` into the user cache (its own dependency set is heavy and not
needed: only the data files and the checker's modules are read). Each case's functions
become ToolSpecs; its question goes through the planning request the orchestrator builds
(native or legacy prompt, the same tool_choice rule, a forced first call left free where the
model all but rules a call out (under 5 %) and the question names none of the tools, the
same parser, the same order check: of several calls in one reply, one of another function
after an earlier call waits for the next step (``call_order``, the functions being MCP tools
with no hints), so only the calls run at once count; the same value check: optional arguments nobody asked for left out of a first
step's calls, and on a free first step a call with a number or a name nobody gave not run,
so it counts as no call; the same fit check: there, a call the question did not name not
run when the model judges its tool not made for the question, or not clearly made for it
where the model's own chance of a call was under 15 %), and the calls are scored by BFCL's own AST checker
(``ast_checker.py`` from the same wheel, run as it is): the right function, every required
parameter, no unknown one, each value among the allowed ones. irrelevance (and
live_irrelevance, not run by default) is right when no call is made.

``--out`` writes one line per case: BFCL's ``id``, the category, and the calls in BFCL's own
answer format (``[{function_name: {argument: value}}]``, empty when no call), so any checker,
BFCL's included, can re-score the run. Printed: per category the AST accuracy, the
accuracy of the same replies without the value check ("unchecked": the model's calls as made),
the malformed-call rate (replies that tried to call and did not produce a valid call), the
share of cases whose call the value check took back ("guessed"), the share the fit check
took back ("unfit") and the time per case. Rows of ``--out`` keep the unchecked calls and
their score too, the model's chance of starting with a call (``p_call``, on a free first
step), how the first call was left (``first_call``: forced, named, unsure or free) and the fit
check's share of "yes" for each tool it judged (``fit``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
import types
import zipfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import platformdirs  # noqa: E402

from pheron_tui.core.bus import EventBus  # noqa: E402
from pheron_tui.core.call_format import (  # noqa: E402
    FirstStep,
    call_format,
    first_step_request,
    planning_request,
)
from pheron_tui.core.call_order import CallOrder  # noqa: E402
from pheron_tui.core.grounding import (  # noqa: E402
    guessed_values,
    without_guessed_items,
    without_unasked,
)
from pheron_tui.core.intent import speaks_of_the_workspace  # noqa: E402
from pheron_tui.core.messages import FunctionSpec, Message, ToolSpec  # noqa: E402
from pheron_tui.core.orchestrator import AgentSettings  # noqa: E402
from pheron_tui.core.parsing import distinct_calls, parse_reply  # noqa: E402
from pheron_tui.core.streaming import stream_reply  # noqa: E402
from pheron_tui.core.tool_fit import fit_share, least_share  # noqa: E402
from pheron_tui.core.tool_schema import repaired  # noqa: E402
from pheron_tui.tools.mcp import risk_of  # noqa: E402

BFCL_VERSION = "2026.3.23"
CATEGORIES = (
    "simple_python",
    "multiple",
    "irrelevance",
    "live_simple",
    "parallel",
    "live_multiple",
)
NO_CALL_CATEGORIES = ("irrelevance", "live_irrelevance")
"""Right when no call is made (live_irrelevance, 884 cases, is not in the default set)."""
TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


# BFCL's own AST checker and the pure modules it imports, read from the same wheel as the
# data (its model_config, which pulls every model handler in, is replaced by a stub).
CHECKER_FILES = (
    "bfcl_eval/eval_checker/ast_eval/ast_checker.py",
    "bfcl_eval/eval_checker/ast_eval/type_convertor/java_type_converter.py",
    "bfcl_eval/eval_checker/ast_eval/type_convertor/js_type_converter.py",
    "bfcl_eval/constants/enums.py",
    "bfcl_eval/constants/type_mappings.py",
)


def data_folder() -> Path:
    """The BFCL data files and checker, fetched with pip the first time."""
    folder = Path(platformdirs.user_cache_dir("pheron-tui")) / f"bfcl-{BFCL_VERSION}"
    if (folder / "BFCL_v4_simple_python.json").is_file() and all(
        (folder / "checker" / name).is_file() for name in CHECKER_FILES
    ):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                f"bfcl-eval=={BFCL_VERSION}",
                "-d",
                tmp,
            ],
            check=True,
        )
        [wheel] = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if re.fullmatch(r"bfcl_eval/data/(possible_answer/)?BFCL_v4_[a-z_]+\.json", name):
                    prefix = "answer_" if "possible_answer" in name else ""
                    (folder / f"{prefix}{Path(name).name}").write_bytes(archive.read(name))
                elif name in CHECKER_FILES:
                    target = folder / "checker" / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
    return folder


def official_checker(folder: Path) -> Callable[[list[dict], list[dict], dict, str], bool]:
    """BFCL's ``ast_checker`` as ``check(calls, truth, case, category)``: the scoring the
    leaderboard does, not a port of it."""
    sys.path.insert(0, str(folder / "checker"))
    config = types.ModuleType("bfcl_eval.constants.model_config")
    # Function names are kept as the case writes them (dots included), as for a model whose
    # names need no rewriting.
    plain = types.SimpleNamespace(underscore_to_dot=False)
    config.MODEL_CONFIG_MAPPING = defaultdict(lambda: plain)  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = config
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    def check(calls: list[dict], truth: list[dict], case: dict, category: str) -> bool:
        if not calls:  # the runner's decoder rejects an empty reply before the checker
            return False
        result = ast_checker(case["function"], calls, truth, Language.PYTHON, category, "pheron")
        return bool(result["valid"])

    return check


def load(folder: Path, category: str) -> list[tuple[dict, list | None]]:
    cases = [
        json.loads(line)
        for line in (folder / f"BFCL_v4_{category}.json").read_text().splitlines()
        if line.strip()
    ]
    answers_file = folder / f"answer_BFCL_v4_{category}.json"
    answers = {}
    if answers_file.is_file():
        for line in answers_file.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                answers[row["id"]] = row["ground_truth"]
    return [(case, answers.get(case["id"])) for case in cases]


def to_schema(schema: Any) -> Any:
    """BFCL's Python-flavoured schema types to JSON Schema."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "type" and isinstance(value, str):
                mapped = TYPES.get(value, value)
                if mapped is not None:
                    out[key] = mapped
            elif key in ("properties",) and isinstance(value, dict):
                out[key] = {k: to_schema(v) for k, v in value.items()}
            elif key in ("items", "additionalProperties"):
                out[key] = to_schema(value)
            else:
                out[key] = value
        return out
    return schema


def tool_specs(functions: list[dict]) -> list[ToolSpec]:
    """The case's functions as the agent takes an MCP server's tools (``McpTool``): their
    self-contradicting options read as meant (``tool_schema.repaired``)."""
    return [
        ToolSpec(
            function=FunctionSpec(
                name=f["name"],
                description=f.get("description", ""),
                parameters=repaired(
                    to_schema(f.get("parameters") or {"type": "dict", "properties": {}})
                ),
            )
        )
        for f in functions
    ]


async def request_for(
    provider: Any, case: dict, specs: list[ToolSpec], free_start: bool = True
) -> FirstStep:
    """The orchestrator's first planning request for this question and these tools, a forced
    call left free where the model all but rules a call out and the question names none of
    the tools, unless the question speaks of files, folders or commands (the bench's
    workspace is empty: nothing else there to name). Also: how the call was left, and the
    model's chance of a call where it was scored (kept in ``--out`` rows, so a first-call
    threshold can be weighed without a new run)."""
    turns = [Message(role=m["role"], content=m["content"]) for m in case["question"][0]]
    request = planning_request(
        call_format(provider),
        Path(".").resolve(),
        specs,
        turns,
        max_tokens=AgentSettings.plan_max_tokens,
        request=question_of(case),
    )
    if free_first_step(case, free_start):
        names = [spec.function.name for spec in specs]
        return await first_step_request(provider, request, question_of(case), names)
    return FirstStep(request, "forced")


def question_of(case: dict) -> str:
    return " ".join(str(m["content"]) for m in case["question"][0] if m["role"] == "user")


def free_first_step(case: dict, free_start: bool) -> bool:
    """Whether the orchestrator would leave this first step free (and check its values): the
    question speaks of no file, folder or command."""
    return free_start and not speaks_of_the_workspace(question_of(case))


def order_checked(calls: list[dict]) -> list[dict]:
    """The calls of one reply the orchestrator runs at once (``call_order``): the case's
    functions, served as MCP tools with no hints, are of the ``execute`` tier, so a call of
    another function after one of them waits for the next step, where the model has seen
    that result (it is not part of this step's answer); the same function again (BFCL's
    parallel) runs."""
    tier = risk_of(None)
    order, now = CallOrder(), []
    for call in calls:
        for name in call:
            waits = order.waits(name, tier)
            if waits is None:
                now.append(call)
            order.add(name, tier, ok=waits is None)  # a call put off did not go through
    return now


def value_checked(
    calls: list[dict], tools: dict[str, dict], said: str, start: FirstStep | None
) -> tuple[list[dict], int]:
    """The calls as the orchestrator leaves them on a first step: each without the optional
    arguments nobody asked for, and on a free one (``start`` given) none where one needs a
    value nobody gave, every value where the call was forced only because the question
    names a tool (the model is asked for the answer instead), after the items nobody said are
    taken from a list of names some of which were (``without_guessed_items``). Also: 1 when it
    took calls back."""
    if start:
        chosen = start.call != "named"
        calls = [
            {n: without_guessed_items(a, tools[n], said, chosen=chosen) for n, a in call.items()}
            for call in calls
        ]
        if any(
            guessed_values(a, tools[n], said, chosen=chosen) for c in calls for n, a in c.items()
        ):
            return [], 1
    asked = [{n: without_unasked(a, tools[n], said)} for call in calls for n, a in call.items()]
    return asked, 0


async def fit_checked(
    provider: Any, calls: list[dict], specs: list[ToolSpec], question: str, start: FirstStep | None
) -> tuple[list[dict], dict[str, float | None]]:
    """The calls as the orchestrator's fit check leaves them on a first step (``start``
    given) whose call the question did not name: none to a tool the model judges not made for
    the question. Also: each judged tool's share of "yes" (kept in ``--out`` rows, so the
    threshold can be weighed without a new run)."""
    if start is None or start.call == "named" or not calls:
        return calls, {}
    functions = {spec.function.name: spec.function for spec in specs}
    shares = {
        name: await fit_share(provider, question, functions[name])
        for name in dict.fromkeys(name for call in calls for name in call)
    }
    least = least_share(sure=start.call == "unsure")
    fitting = [
        call
        for call in calls
        if all(shares[name] is None or shares[name] >= least for name in call)
    ]
    return fitting, shares


async def run(args: argparse.Namespace) -> None:
    from pheron_tui.providers.llamacpp import LlamaCppProvider
    from pheron_tui.providers.mlx import MLXProvider

    constrained = args.constrained == "on"
    engine = {"llamacpp": LlamaCppProvider, "mlx": MLXProvider}[args.provider]
    provider = engine(args.model, constrained=constrained)
    await provider.load()
    folder = data_folder()
    ast_match = official_checker(folder)
    bus = EventBus("bfcl")
    done: dict[str, tuple[bool, bool]] = {}
    if args.out and args.resume and args.out.is_file():
        for line in args.out.read_text().splitlines():
            row = json.loads(line)
            done[row["id"]] = (row["correct"], row.get("unchecked_correct", row["correct"]))
    out = open(args.out, "a" if args.resume else "w") if args.out else None  # noqa: SIM115
    scope = "every case" if args.limit is None else f"first {args.limit} cases per category"
    if args.ids:
        scope = f"{len(args.ids)} chosen cases"
    print(
        f"BFCL v4 ({BFCL_VERSION}) · {args.provider} · {args.model} · constrained {args.constrained}"
        f" · free start {args.free_start} · {scope}"
    )
    print(
        f"{'category':<16}{'cases':>6}{'AST acc':>9}{'unchecked':>11}{'malformed':>11}"
        f"{'guessed':>9}{'unfit':>7}{'s/case':>8}"
    )
    for category in args.categories.split(","):
        right = malformed = ran = guessed = unfit = unchecked = 0
        cases = load(folder, category)[: args.limit]
        if args.ids:
            cases = [(case, truth) for case, truth in cases if case["id"] in args.ids]
        started = time.perf_counter()
        for case, truth in cases:
            if case["id"] in done:  # scored by an earlier run of this --out file
                right += done[case["id"]][0]
                unchecked += done[case["id"]][1]
                continue
            ran += 1
            specs = tool_specs(case["function"])
            start = await request_for(provider, case, specs, args.free_start == "on")
            reply = await stream_reply(provider, bus, 0, start.request, show_answer=False)
            schemas = {s.function.name: s.function.parameters for s in specs}
            parsed = parse_reply(reply.answer, schemas)
            calls = []
            tried = parsed.kind == "tool_calls" or bool(reply.provider_calls)
            known = {s.function.name for s in specs}
            valid = tried
            for call in distinct_calls(parsed.calls) if parsed.kind == "tool_calls" else []:
                if call.error or call.name not in known:
                    valid = False
                    continue
                calls.append({call.name: call.arguments})
            if tried and not valid:
                malformed += 1
            # What the orchestrator's history holds at this point: the case's own messages
            # (not the planning prompt, which lists the tools), and the reasoning.
            said = "\n".join([*(str(m["content"]) for m in case["question"][0]), reply.think])
            tools = {s.function.name: s.function.model_dump() for s in specs}
            raw = calls
            free = free_first_step(case, args.free_start == "on")
            calls, took_back = value_checked(
                order_checked(calls), tools, said, start if free else None
            )
            guessed += took_back
            checked = calls
            calls, fit = await fit_checked(
                provider, calls, specs, question_of(case), start if free else None
            )
            unfit += len(calls) < len(checked)
            correct, raw_correct = (
                not c
                if category in NO_CALL_CATEGORIES
                else truth is not None and ast_match(c, truth, case, category)
                for c in (calls, raw)
            )
            unchecked += raw_correct
            right += correct
            if out:
                row = {
                    "id": case["id"],
                    "category": category,
                    "result": calls,
                    "correct": correct,
                    "unchecked": raw,
                    "unchecked_correct": raw_correct,
                    "p_call": start.chance,
                    "first_call": start.call,
                    "fit": fit,
                    "malformed": tried and not valid,
                }
                if tried and not valid:  # kept whole, so a run's failures can be read later
                    row["reply"] = reply.answer
                    row["errors"] = [
                        c.error or f"unknown tool {c.name}"
                        for c in parsed.calls
                        if c.error or c.name not in known
                    ]
                out.write(json.dumps(row) + "\n")
                out.flush()  # a long run killed half-way still leaves its cases
        elapsed = time.perf_counter() - started
        n = max(len(cases), 1)
        print(
            f"{category:<16}{len(cases):>6}{right / n:>9.1%}{unchecked / n:>11.1%}"
            f"{malformed / n:>11.1%}{guessed / n:>9.1%}{unfit / n:>7.1%}"
            f"{elapsed / max(ran, 1):>8.2f}"
        )
    if out:
        out.close()
    await provider.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=["llamacpp", "mlx"], default="llamacpp")
    parser.add_argument("--model", default="bundled")
    parser.add_argument("--constrained", choices=["on", "off"], default="on")
    parser.add_argument(
        "--free-start",
        choices=["on", "off"],
        default="on",
        help="off: every first step is forced to a call, as before the agent scored it",
    )
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--ids",
        type=lambda text: set(text.split(",")),
        help="only these cases (comma-separated BFCL ids): a change's own cases, re-run",
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--resume", action="store_true", help="keep the cases already in --out and run the rest"
    )
    asyncio.run(run(parser.parse_args()))
