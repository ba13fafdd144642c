"""Same input, same bytes out; and no input makes a reader fail with anything but InputError."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankwise
from rankwise import InputError
from tests.helpers import write

MEASURES = ["official", "nDCG@10", "ERR@20", "RelP@10", "MAE"]


def _collection(tmp_path):
    lines_q, lines_r = [], []
    for q in range(40):
        for d in range(30):
            if (q * 7 + d * 3) % 4:
                lines_q.append(f"q{q} 0 doc{d:02d} {(q + d) % 4}")
            lines_r.append(f"q{q} Q0 doc{(d * 11) % 37:02d} {d + 1} {round(1 - d / 40, 1)} run")
    return write(tmp_path, "qrels", "\n".join(lines_q) + "\n"), write(tmp_path, "run", "\n".join(lines_r) + "\n")


def test_json_is_byte_identical_across_runs_and_thread_counts(tmp_path):
    qrels, run = _collection(tmp_path)
    first = rankwise.evaluate(qrels, run, MEASURES, per_query=True).to_json()
    threads = pa.cpu_count()
    try:
        pa.set_cpu_count(1)
        single = rankwise.evaluate(qrels, run, MEASURES, per_query=True).to_json()
    finally:
        pa.set_cpu_count(threads)
    assert single == first
    code = ("import sys, rankwise; sys.stdout.write(rankwise.evaluate(sys.argv[1], sys.argv[2], "
            f"{MEASURES!r}, per_query=True).to_json())")
    other_process = subprocess.run([sys.executable, "-c", code, qrels, run], capture_output=True,
                                   text=True, check=True).stdout
    assert other_process == first


LINE = st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=8),
                min_size=0, max_size=8).map(lambda fields: " ".join(fields))
TEXT = st.lists(LINE, max_size=12).map("\n".join)


def _read_anything(tmp_path, data: bytes) -> None:
    path = write(tmp_path, "input", data)
    for reader in (rankwise.read_run, rankwise.read_qrels):
        try:
            reader(path)
        except InputError:
            pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(TEXT.map(str.encode), st.binary(max_size=200)))
def test_readers_raise_only_input_errors(tmp_path, data):
    _read_anything(tmp_path, data)


#: The long fuzzing's inputs, one test each (so that test workers share them out): lines of
#: fields, bytes, and strings of the tokens a TREC line is made of.
LONG_INPUTS = {
    "text": TEXT.map(str.encode),
    "bytes": st.binary(max_size=400),
    "tokens": st.lists(st.sampled_from(["q1", "Q0", "0", "d1", "1", "2.5", "nan", "-1", "#",
                                        '"', "\t", " ", "\r", "\n", "é", "1e309", "tag"]),
                       max_size=60).map(lambda parts: "".join(parts).encode()),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(LONG_INPUTS))
def test_readers_raise_only_input_errors_long(tmp_path, kind):
    """40,000 inputs in all, 13,334 of each kind (about 80 s a kind on one core); CI runs
    them, `-m "not slow"` skips them."""

    @settings(max_examples=13334, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(LONG_INPUTS[kind])
    def read(data):
        _read_anything(tmp_path, data)

    read()
