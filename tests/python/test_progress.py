"""Progress and status lines on stderr (hulk._progress)."""

from __future__ import annotations


def test_status_lines_and_heartbeat_while_a_step_runs():
    import io
    import threading
    from hulk._progress import Status

    class Stream(io.StringIO):
        def __init__(self):
            super().__init__()
            self.beat = threading.Event()

        def write(self, text):
            if "still planning" in text:
                self.beat.set()
            return super().write(text)

    out = Stream()
    status = Status(stream=out, every=0.01)
    status("loading cluster x.json")
    status("planning with search (4/5)")
    assert out.beat.wait(60), out.getvalue()  # the heartbeat names the running step
    status.done()
    lines = out.getvalue().splitlines()
    steps = [ln for ln in lines if "] still " not in ln]  # the heartbeat may interleave anywhere
    assert steps[0].startswith("hulk: [") and steps[0].endswith("loading cluster x.json")
    assert steps[1].endswith("planning with search (4/5)") and len(steps) == 2
    assert any("still planning with search (4/5)" in ln for ln in lines)
    n = len(out.getvalue())
    status("after done")  # done() stopped the heartbeat thread: only this line is added
    assert out.getvalue()[n:].count("\n") == 1
