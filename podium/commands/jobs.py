"""Job commands: run and queue run cards, the worker, and the logbook in a terminal.

podium run CARD.md                  # run a card here, with a progress bar
podium submit CARD.md               # queue it; `podium worker` runs it
podium worker [--once] [--poll S]   # execute queued jobs (--once: until the queue is empty)
podium jobs [--json]                # every job, newest first
podium jobs show ID [--json]        # status, card, inputs, outputs, error, reproducibility
podium jobs logs ID [--follow]
podium jobs metrics ID [--json] [--name N]  # every metric row the Logbook charts
podium jobs watch ID                # a progress bar until it ends (exit 1 unless it succeeded)
podium jobs cancel ID
podium jobs scale ID --replicas N   # a running async GRPO job gets more replicas
podium jobs rerun ID [--compare]    # its card again into <out>__rerun_<n>; --compare: run
                                    # here, then rows / weights / curves compared (--json)
podium jobs kinds [KIND] [--json]   # the job kinds and their card fields / options
podium jobs kinds KIND --schema     # the run card's JSON Schema; --markdown: a docs table
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from podium.commands.jobs_table import jobs_table, waiting_lines
from podium.commands.terminal import safe_console
from podium.commands.typer_commands import add_commands
from podium.jobs.cards import card_template, read_card
from podium.jobs.kinds import KINDS, get_kind
from podium.jobs.lanes import LIGHT_SLOTS_HELP, waiting_reason
from podium.jobs.launch import run_foreground, submit
from podium.jobs.logbook import duration_text
from podium.jobs.logs import follow, log_tail
from podium.jobs.plugins import load_plugins
from podium.jobs.progress import progress_text
from podium.jobs.queue import (
    active_jobs,
    fail_dead_jobs,
    get_job,
    job_json,
    list_jobs,
    request_cancel,
)
from podium.jobs.reproducibility import reproducibility_text
from podium.jobs.rerun import describe_report, rerun_and_compare
from podium.jobs.rerun_queue import queue_rerun
from podium.jobs.scale import request_replicas, requests_of
from podium.jobs.tables import FINISHED, last_metrics, metric_rows, warnings_of

# Job errors, logs and cards carry other people's text: consoles that neutralise it.
out = safe_console(highlight=False, soft_wrap=True, markup=False)
err = safe_console(stderr=True, highlight=False, soft_wrap=True, markup=False)
jobs_app = typer.Typer(help="List, inspect, follow and cancel jobs.", no_args_is_help=False)


def run(
    card: Annotated[Path, typer.Argument(help="Run card (Markdown with YAML front matter).")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run a card in the foreground; it is recorded in the logbook like any job."""
    job = run_foreground(read_card(card), quiet=quiet)
    out.print(f"job {job['id']} succeeded")
    for table in (job["outputs"] or {}).get("tables", []):
        out.print(f"  wrote {table['name']} @ snapshot {table['snapshot_id']}")


def submit_cmd(card: Annotated[Path, typer.Argument(help="Run card to queue.")]) -> None:
    """Queue a card for `podium worker`; prints the job id."""
    job_id = submit(read_card(card))
    out.print(job_id)


def worker(
    once: Annotated[bool, typer.Option("--once", help="Exit when the queue is empty.")] = False,
    poll: Annotated[float, typer.Option("--poll", help="Seconds between queue polls.")] = 1.0,
    concurrency: Annotated[int, typer.Option(help="Jobs of any kind run at once.")] = 1,
    light_slots: Annotated[int, typer.Option(help=LIGHT_SLOTS_HELP)] = 1,
) -> None:
    """Execute queued jobs, each in its own process group, until stopped.

    Training takes the `--concurrency` slots; other kinds may also use the
    `--light-slots`, so they start while a training run goes on."""
    from podium.jobs.worker import Worker

    w = Worker(
        poll=poll,
        concurrency=concurrency,
        light_slots=light_slots,
        say=lambda m: out.print(m),
    )
    w.install_signal_handlers()
    w.run(once=once)


@jobs_app.callback(invoke_without_command=True)
def jobs(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    status: Annotated[str | None, typer.Option(help="Only jobs in this status.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="How many jobs, newest first.")] = 50,
) -> None:
    """List jobs, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    rows = list_jobs(limit=limit, status=status)
    if as_json:
        active = active_jobs()
        out.print_json(
            json.dumps([{**job_json(j), "waiting": waiting_reason(j, active)} for j in rows])
        )
        return
    out.print(jobs_table(rows, out.width))
    for line in waiting_lines(rows, out.width):
        out.print(line)


@jobs_app.command("watch")
def watch(
    job_id: Annotated[str, typer.Argument(help="Job id (or a unique prefix).")],
    poll: Annotated[float, typer.Option("--poll", help="Seconds between checks.")] = 1.0,
) -> None:
    """Follow a job with a progress bar until it ends; exits 1 if it did not succeed."""
    job = get_job(job_id)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[note]}"),
        console=err,
        transient=False,
    ) as bar:
        task = bar.add_task(f"{job['kind']} {job['status']}", total=None, note="")
        while True:
            job = get_job(job["id"])
            bar.update(
                task,
                description=f"{job['kind']} {job['status']}",
                completed=job["progress_done"] or 0,
                total=job["progress_total"] or None,
                note=progress_text(job)[:60],  # "14/30 (47%) · step 14 · about 3m left"
            )
            if job["status"] in FINISHED:
                if job["status"] == "succeeded" and job["progress_total"]:
                    bar.update(task, completed=job["progress_total"])
                break
            time.sleep(poll)
    out.print(f"job {job['id']} {job['status']}")
    if job["error"]:
        err.print(job["error"].split("\n")[0])
    if job["status"] != "succeeded":
        raise typer.Exit(1)


@jobs_app.command("show")
def show(
    job_id: Annotated[str, typer.Argument(help="Job id (or a unique prefix).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """A job's status, card, inputs, outputs, error and reproducibility (as the Logbook)."""
    fail_dead_jobs()  # a job whose process was SIGKILLed says so here, as in `podium jobs`
    job = get_job(job_id)
    reproducible = reproducibility_text(job)  # the Logbook's line: '' when nothing applies
    if as_json:
        extra = {
            "reproducibility": reproducible,
            "metrics": last_metrics(job["id"]),
            "warnings": warnings_of(job["id"]),
            "requests": requests_of(job["id"]),
        }
        out.print_json(json.dumps({**job_json(job), **extra}))
        return
    out.print(f"job      {job['id']}\nkind     {job['kind']}\nstatus   {job['status']}")
    out.print(f"progress {progress_text(job)}\nduration {duration_text(job)}")
    if job["status"] == "queued":
        out.print(f"why      {waiting_reason(job, active_jobs())}")
    out.print(f"inputs   {', '.join(job['inputs']) or '-'}")
    for table in (job["outputs"] or {}).get("tables", []):
        out.print(f"output   {table['name']} @ {table['snapshot_id']}")
    out.print(f"log      {job['log_path']}")
    if reproducible:
        out.print(f"reproducibility {reproducible}")
    for warning in warnings_of(job["id"]):
        out.print(f"warning  {warning}")
    for asked in requests_of(job["id"]):
        answer = f"{asked['outcome']}: {asked['note']}" if asked["outcome"] else "not answered yet"
        out.print(
            f"request  {asked['what']} {asked['value']} by {asked['requested_by']} ({answer})"
        )
    if job["error"]:
        out.print(f"error    {job['error']}")
    out.print("card:\n" + job["card"])


@jobs_app.command("metrics")
def metrics(
    job_id: Annotated[str, typer.Argument(help="Job id (or a unique prefix).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    names: Annotated[
        list[str] | None, typer.Option("--name", help="Only this metric (repeatable).")
    ] = None,
) -> None:
    """Every metric a job reported, as the Logbook charts them: step, name, value, in
    the order reported (a step reported twice charts its last value)."""
    job = get_job(job_id)
    rows = [r for r in metric_rows(job["id"]) if not names or r[1] in names]
    if as_json:
        # NaN and infinity are not JSON: null, as a chart shows no point for them.
        plain = [
            {"step": step, "name": name, "value": value if math.isfinite(value) else None}
            for step, name, value in rows
        ]
        out.out(json.dumps(plain))
        return
    table = Table("step", "name", "value", box=box.SIMPLE)
    for step, name, value in rows:
        table.add_row(str(step), name, f"{value:.6g}")
    out.print(table if rows else f"job {job['id']} reported no metrics")


@jobs_app.command("logs")
def logs(
    job_id: Annotated[str, typer.Argument(help="Job id (or a unique prefix).")],
    follow_: Annotated[bool, typer.Option("--follow", "-f", help="Print until it ends.")] = False,
    lines: Annotated[int, typer.Option("--lines", "-n", help="Lines of the tail to print.")] = 200,
) -> None:
    """Print a job's log (its tail, or all of it as it grows with --follow)."""
    job = get_job(job_id)
    if not follow_:
        out.out(log_tail(job["log_path"], lines), end="")
        return
    for chunk in follow(job["log_path"], lambda: get_job(job["id"])["status"] in FINISHED):
        out.out(chunk, end="")
    out.print(f"-- job {job['id']} {get_job(job['id'])['status']}")


@jobs_app.command("cancel")
def cancel(job_id: Annotated[str, typer.Argument(help="Job id (or a unique prefix).")]) -> None:
    """Stop a job: queued ones never start, running ones are stopped by their worker."""
    job = get_job(job_id)
    out.print(f"job {job['id']}: {request_cancel(job['id'])}")


@jobs_app.command("scale")
def scale(
    job_id: Annotated[str, typer.Argument(help="Job id (or a unique prefix).")],
    replicas: Annotated[
        int, typer.Option("--replicas", help="Generation replicas the job should have.")
    ],
) -> None:
    """Add generation replicas to a running async GRPO job (kind grpo, rollout: async).

    The job starts them and joins each with the learner's current weights, verified
    (listed in its syncs); scaling down is not supported yet."""
    out.print(request_replicas(job_id, replicas))


@jobs_app.command("rerun")
def rerun_cmd(
    job_id: Annotated[str, typer.Argument(help="Job id (or a unique prefix).")],
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Run it here, then report identical / differing / how much: rows per "
            "table; a checkpoint's weights and loss/reward curves; environment pins.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Re-run a succeeded job's stored card into new outputs (<out>__rerun_<n>).

    Without --compare it is queued for a worker and its id printed.
    """
    if not compare:
        new_id, plan = queue_rerun(job_id)
        for original, again in {**plan.tables, **plan.checkpoints}.items():
            err.print(f"queued job {new_id}: {original} -> {again}")
        out.print(new_id)
        return
    # A job's own prints (TRL prints each log line) go to stderr: stdout is the report.
    with contextlib.redirect_stdout(sys.stderr):
        report = rerun_and_compare(job_id, quiet=quiet)
    if as_json:
        out.print_json(json.dumps(report.to_dict()))
        return
    out.print("\n".join(describe_report(report)))


@jobs_app.command("template")
def template(
    kind: Annotated[str, typer.Argument(help="Job kind (see `podium jobs kinds`).")],
    out_path: Annotated[Path | None, typer.Option("--out", help="Write it here.")] = None,
) -> None:
    """A run card for KIND with every field, its default and its help; edit, then run."""
    text = card_template(kind)
    if out_path is None:
        out.out(text, end="")
        return
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text, encoding="utf-8")
    out.print(f"wrote {out_path}; fill it in, then `podium run {out_path}`")


@jobs_app.command("kinds")
def kinds(
    kind: Annotated[str | None, typer.Argument(help="Only this kind.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the kind's run-card JSON Schema.")
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print each kind's settings as a Markdown table.")
    ] = False,
) -> None:
    """The job kinds and their card fields (each also a command-line option)."""
    from podium.jobs.fields import field_json, markdown_table

    load_plugins()
    chosen = [get_kind(kind)] if kind else sorted(KINDS.values(), key=lambda k: k.name)
    if schema:
        schemas = {k.name: k.config_model().model_json_schema() for k in chosen}
        out.print_json(json.dumps(schemas[kind] if kind else schemas))
        return
    if markdown:
        for k in chosen:
            typer.echo(f"### `{k.name}`\n\n{k.description}\n\n{markdown_table(k.fields())}")
        return
    if as_json:
        data = [
            {
                "name": k.name,
                "description": k.description,
                "resumable": k.resumable,
                "fields": [field_json(f) for f in k.fields()],
            }
            for k in chosen
        ]
        typer.echo(json.dumps(data, indent=2))
        return
    for k in chosen:
        out.print(f"{k.name}: {k.description}")
        for f in map(field_json, k.fields()):
            default = "required" if f["required"] else f"= {f['default']!r}"
            out.print(f"    {f['name']} ({f['option']}): {f['type']} {default}  {f['help']}")


def register(app: typer.Typer) -> None:
    add_commands(app, {"run": run, "submit": submit_cmd, "worker": worker})
    app.add_typer(jobs_app, name="jobs")
