"""Container logs read as the kubelet serves them: records, tail, since, timestamps, follow across rotation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pykueue.cluster import cri_log
from pykueue.cluster.container_runs import ContainerFiles
from pykueue.cluster.container_shim import MAX_LINE, RotatingLog
from pykueue.cluster.pod_logs import FileLogReader, LogReadOptions, MemoryLogReader, stream_log

T0 = 1_800_000_000 * 1_000_000_000


def _records(*lines: str, start_ns: int = T0) -> bytes:
    return b"".join(cri_log.record(line, start_ns + i * 1_000_000_000) for i, line in enumerate(lines))


def _total_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def _read_all(reader: FileLogReader | MemoryLogReader) -> bytes:
    out = b""
    while chunk := reader.read():
        out += chunk
    return out


def test_records_render_as_content_or_with_their_timestamps() -> None:
    partial = cri_log.timestamp(T0) + b" stdout P half a \n"
    data = partial + _records("line", start_ns=T0 + 1) + b"an old unformatted line\n"
    assert cri_log.render(data, timestamps=False) == b"half a line\nan old unformatted line\n"
    assert cri_log.render(data, timestamps=True) == (
        b"2027-01-15T08:00:00.000000000Z half a 2027-01-15T08:00:00.000000001Z line\nan old unformatted line\n"
    )


def test_tail_reads_back_from_the_end_in_blocks(tmp_path: Path) -> None:
    path = tmp_path / "c.log"
    path.write_bytes(_records(*(f"line {i} " + "x" * 3000 for i in range(100))))  # ~300 KB: several blocks
    for lines, expected in (
        (0, []),
        (1, [99]),
        (3, [97, 98, 99]),
        (40, list(range(60, 100))),
        (100, list(range(100))),
        (500, list(range(100))),
    ):
        reader = FileLogReader(path, LogReadOptions(tail_lines=lines))
        reader.open()
        shown = _read_all(reader).decode().splitlines()
        reader.close()
        assert [int(line.split()[1]) for line in shown] == expected, lines


def test_since_skips_older_records_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "c.log"
    path.write_bytes(_records(*(f"line {i}" for i in range(10))))  # one a second from T0
    since = cri_log.timestamp(T0 + 6 * 1_000_000_000)
    reader = FileLogReader(path, LogReadOptions(since=since))
    reader.open()
    assert _read_all(reader) == b"line 6\nline 7\nline 8\nline 9\n"
    reader = FileLogReader(path, LogReadOptions(since=cri_log.timestamp(T0 + 60 * 1_000_000_000)))
    reader.open()
    assert _read_all(reader) == b""
    # tail then since, as the kubelet applies them
    reader = FileLogReader(path, LogReadOptions(tail_lines=5, since=since, timestamps=True))
    reader.open()
    assert _read_all(reader).decode().splitlines() == [
        f"{cri_log.timestamp(T0 + i * 1_000_000_000).decode()} line {i}" for i in range(6, 10)
    ]


def test_a_follower_reads_across_rotation_without_losing_or_repeating_a_line(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "c.log", max_bytes=2000, max_files=5)
    log.write(b"first\n")
    reader = FileLogReader(tmp_path / "c.log", LogReadOptions(), max_files=5)
    reader.open()
    seen = _read_all(reader)
    written = 1
    for burst in range(60):
        # up to three rotations between two reads: the reader walks the chain by inode
        for _ in range(burst % 4 * 40):
            log.write(f"line {written}\n".encode())
            written += 1
        seen += _read_all(reader)
    log.close()
    seen += _read_all(reader)
    reader.close()
    assert seen.decode().splitlines() == ["first", *(f"line {i}" for i in range(1, written))]
    assert len(list(tmp_path.iterdir())) == 5


def test_a_follower_that_falls_behind_the_kept_files_goes_on_from_the_oldest(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "c.log", max_bytes=500, max_files=2)
    log.write(b"start\n")
    reader = FileLogReader(tmp_path / "c.log", LogReadOptions(), max_files=2)
    reader.open()
    assert _read_all(reader) == b"start\n"
    for i in range(100):
        log.write(f"line {i}\n".encode())
    log.close()
    kept = cri_log.render((tmp_path / "c.log.1").read_bytes() + (tmp_path / "c.log").read_bytes(), timestamps=False)
    rest = _read_all(reader)
    # the rest of the file it had open (deleted by rotation, still readable), then what is kept: the
    # lines rotated away in between are lost, as on a kubelet, but none is repeated or out of order
    assert rest.endswith(kept)
    numbers = [int(x.split()[1]) for x in rest.decode().splitlines()]
    assert numbers == sorted(set(numbers))
    assert numbers[0] == 0
    assert numbers[-1] == 99


def test_a_follower_ends_when_its_instance_is_set_aside_at_a_restart(tmp_path: Path) -> None:
    files = ContainerFiles(tmp_path, "c")
    files.log.write_bytes(_records("before"))
    reader = FileLogReader(files.log, LogReadOptions(), previous=files.previous_log)
    reader.open()
    with files.log.open("ab") as handle:
        handle.write(_records("last words"))
    files.retire_log()  # what the agent does before it starts the next instance
    files.log.write_bytes(_records("next instance"))
    assert _read_all(reader) == b"before\nlast words\n"
    assert reader.ended
    previous = FileLogReader(files.previous_log, LogReadOptions())
    previous.open()
    assert _read_all(previous) == b"before\nlast words\n"


async def test_stream_log_follows_until_the_container_ends_and_reads_each_byte_once(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "c.log", max_bytes=4000, max_files=5)
    log.write(b"one\n")
    reader = FileLogReader(tmp_path / "c.log", LogReadOptions(), max_files=5)
    reader.open()
    ended = False
    reads: list[int] = []
    original = os.read

    def counting_read(fd: int, size: int) -> bytes:
        data = original(fd, size)
        reads.append(len(data))
        return data

    async def writer() -> None:
        nonlocal ended
        for i in range(200):
            log.write(f"line {i}\n".encode())
            if i % 50 == 0:
                await asyncio.sleep(0.3)
        log.close()
        ended = True

    got = b""
    task = asyncio.create_task(writer())
    os.read = counting_read
    try:
        async with asyncio.timeout(20):
            async for chunk in stream_log(reader, follow=True, running=lambda: not ended):
                got += chunk
    finally:
        os.read = original
    await task
    assert got.decode().splitlines() == ["one", *(f"line {i}" for i in range(200))]
    # every byte of the files was read once: the sum of what the reads returned is what was written
    assert sum(reads) == _total_size(tmp_path)


def test_a_simulated_log_answers_the_same_options() -> None:
    records = _records("a", "b", "c")
    reader = MemoryLogReader(records, LogReadOptions(tail_lines=2))
    reader.open()
    assert _read_all(reader) == b"b\nc\n"
    reader = MemoryLogReader(records, LogReadOptions(since=cri_log.timestamp(T0 + 2 * 1_000_000_000)))
    reader.open()
    assert _read_all(reader) == b"c\n"


def test_the_shim_cuts_long_lines_into_partial_records_and_shows_an_unfinished_line(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "c.log", max_bytes=10 * 1024 * 1024, max_files=5)
    long = b"a" * (MAX_LINE * 2 + 5)
    log.write(long + b"\nshort\nhal")
    log.write(b"f a ")
    log.flush_partial()  # what the shim does when the pipe goes quiet mid-line
    log.write(b"line\n")
    log.close()
    data = (tmp_path / "c.log").read_bytes()
    tags = [line.split(b" ")[2] for line in data.splitlines()]
    assert tags == [b"P", b"P", b"F", b"F", b"P", b"F"]
    assert all(len(line.split(b" ", 3)[3]) <= MAX_LINE for line in data.splitlines())
    assert cri_log.render(data, timestamps=False) == long + b"\nshort\nhalf a line\n"
