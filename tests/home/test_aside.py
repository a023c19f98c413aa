"""One call on a thread of its own (home/aside.py): its result and error reach the caller, and it has ended when the caller goes on."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from cuemem.home.aside import Aside


def test_the_result_and_the_error_reach_the_caller() -> None:
    assert Aside(sum, [1, 2, 3], name="t").result() == 6
    failing = Aside(int, "not a number", name="t")
    failing.wait()
    assert isinstance(failing.error, ValueError)
    with pytest.raises(ValueError):
        failing.result()


def test_without_a_thread_the_call_is_made_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    made: list[str] = []
    aside = Aside(made.append, "now", name="t")
    assert made == ["now"] and aside.result() is None


def test_the_call_waited_for_from_its_own_thread_does_not_wait() -> None:
    box: list[Aside[None]] = []
    started = threading.Event()

    def call() -> None:
        started.wait()
        box[0].wait()  # returns at once: joining itself would raise

    box.append(Aside(call, name="t"))
    started.set()
    assert box[0].result() is None


def test_an_interrupt_while_waiting_is_raised_once_the_call_has_ended() -> None:
    ended = threading.Event()

    def slow() -> None:
        time.sleep(0.4)
        ended.set()

    aside = Aside(slow, name="cuemem-test-slow")
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))  # a real signal: it breaks into a wait
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        aside.wait()
    timer.join()
    assert ended.is_set() and "cuemem-test-slow" not in {t.name for t in threading.enumerate()}
