"""Jobs: run cards, the queue, the worker and launch backends (DESIGN.md "Jobs").

Everything slow is a job of some *kind* (podium/jobs/kinds.py): a pydantic config model
plus `run(config, reporter) -> JobOutputs`. A run card is that config as YAML front
matter over free Markdown notes (podium/jobs/cards.py).

For a command that starts a job (import, validate, generate, build, train):

    from podium.jobs.launch import run_or_write_card

    @app.command()
    def generate(table: str, ..., card: CardOption = None):  # CardOption: commands/store.py
        config = GenerateConfig(prompts=TableRef(name=table), ...)
        run_or_write_card("generate", config, card)

`run_or_write_card(kind, config, card=None, foreground=True)` pins every `TableRef` whose
snapshot_id is None to the table's current snapshot, then writes the card to `card`
and runs nothing, or runs it here with a progress bar (recorded in the logbook like any
job; raises `JobFailed`, a PodiumError, if it fails), or with `foreground=False` queues
it for `podium worker`.

Inside `run`, use the reporter: `reporter.progress(done, total, msg)`,
`reporter.metric(step, {...})`, `reporter.sample(step, {...})`, `reporter.log(msg)`,
`reporter.check_cancelled()` between units, and write tables with
`properties=reporter.lineage` (job id, card, input snapshots, kind) in one commit at the
end (or resumable batches; then register the kind with `resumable=True`).

To run a job inside a page or command that shows progress its own way:
`launch.run_in_process(Card(kind, config), MyReporter)` (MyReporter subclasses
`reporter.JobReporter`) records it like any job and returns the finished record.

Other entry points: `cards.write_card / read_card / parse_card`, `launch.submit(card)`,
`queue.get_job / list_jobs / request_cancel`, `worker.Worker`, `logbook` (what the
Logbook page shows). Extra kinds outside Podium: `PODIUM_JOB_PLUGINS=module,...`.
"""
