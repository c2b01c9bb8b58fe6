"""A job's log as the Logbook shows it: a native library's dump on SIGTERM (abseil's
failure handler in Ray's and vLLM's processes, printed once per process a cancel stops)
is folded into one line that says what happened; the rest stays as written."""

from __future__ import annotations

from pathlib import Path

from podium.jobs.logs import readable_log, readable_tail

# As Ray and vLLM print it (vllm-project/vllm#13437), for two stopped processes.
DUMP = """\
*** SIGTERM received at time=1739834838 on cpu 88 ***
PC: @     0x7fe108d1f117  (unknown)  (unknown)
    @     0x7fe108cd0520  (unknown)  (unknown)
[2025-02-17 15:27:18,341 E 2669821 2669821] logging.cc:460: *** SIGTERM received at time=1739834838 on cpu 88 ***
[2025-02-17 15:27:18,341 E 2669821 2669821] logging.cc:460: PC: @     0x7fe108d1f117  (unknown)  (unknown)
[2025-02-17 15:27:18,341 E 2669821 2669821] logging.cc:460:     @     0x7fe108cd0520  (unknown)  (unknown)
(GenerationReplica pid=4242) *** SIGTERM received at time=1739834838 on cpu 3 ***
(GenerationReplica pid=4242) PC: @     0x7fe108d1f117  (unknown)  epoll_wait
"""  # noqa: E501


def test_a_sigterm_dump_is_one_line_saying_the_job_was_stopped(tmp_path: Path) -> None:
    text = "step 3 of 10\nstopping at step 3 (SIGTERM); its state is registered\n"
    text += DUMP + "cancelled at step 3 of 10\n"
    assert readable_log(text) == (
        "step 3 of 10\nstopping at step 3 (SIGTERM); its state is registered\n"
        "[SIGTERM: the job's processes were stopped; 8 lines of native stack dump left out]\n"
        "cancelled at step 3 of 10\n"
    )
    # The Logbook's tail: the last lines a person reads end in words, not addresses.
    log = tmp_path / "log.txt"
    log.write_text("".join(f"line {i}\n" for i in range(60)) + DUMP)
    tail = readable_tail(log, 3).splitlines()
    assert tail == ["line 58", "line 59", tail[-1]] and tail[-1].startswith("[SIGTERM: ")


def test_lines_that_only_look_alike_are_kept() -> None:
    text = "PC: @ the start of a line, but no dump before it\n    @ 0x1 neither\n"
    assert readable_log(text) == text
