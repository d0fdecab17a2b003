"""catui.dataclass_code: dataclasses defined with reused method code are the classes the plain decorator
makes, and the file the code is kept in survives damage, other Pythons, full and read-only disks,
concurrent writers and kill -9 (issue 28)."""

from __future__ import annotations

import dataclasses
import inspect
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catui.dataclass_code import (
    FORMAT,
    DataclassCodeCache,
    cache_file_candidates,
    file_header,
    read_cache_file,
    reused_dataclass_code,
    write_cache_file,
)
from tests.support.small_disk import fill, remount_read_only, small_tmpfs

ROOT = Path(__file__).resolve().parent.parent

# Compiled without this file's `from __future__ import annotations`: the generated __init__'s annotations
# must stay the real types, as the plain decorator makes them.
SAMPLE = textwrap.dedent('''
    import dataclasses
    from dataclasses import InitVar, dataclass, field
    from typing import ClassVar

    @dataclass
    class Plain:
        name: str
        count: int = 0
        tags: list = field(default_factory=list)
        secret: str = field(default="s", repr=False, compare=False)
        kind: ClassVar[str] = "plain"

    @dataclass(frozen=True, order=True)
    class Frozen:
        x: int
        y: float = 1.5

    @dataclass(kw_only=True, slots=True)
    class KeywordsOnly:
        a: int
        b: str = "b"

    @dataclass(unsafe_hash=True)
    class Hashed:
        key: str
        value: int = field(default=3, hash=False)

    @dataclass
    class WithPost:
        total: int = field(init=False)
        base: InitVar[int] = 2

        def __post_init__(self, base):
            self.total = base * 10

    @dataclass(frozen=True)
    class Child(Frozen):
        z: tuple = ()

    @dataclass(eq=False, repr=False)
    class Bare:
        v: int
''')


def load_sample(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(SAMPLE, f"<{name}>", "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def behaviour(module: types.ModuleType) -> dict[str, Any]:
    """What a user can observe of the sample's classes: signatures, annotations, repr, equality, order,
    hashing, frozen assignment, errors for bad calls, fields."""
    m = module
    seen: dict[str, Any] = {}
    for name in ("Plain", "Frozen", "KeywordsOnly", "Hashed", "WithPost", "Child", "Bare"):
        cls = getattr(m, name)
        seen[f"{name}.signature"] = str(inspect.signature(cls))
        seen[f"{name}.init_annotations"] = {k: repr(v) for k, v in cls.__init__.__annotations__.items()}
        seen[f"{name}.fields"] = [(f.name, f.init, f.repr, f.compare, f.hash, f.kw_only) for f in dataclasses.fields(cls)]
        seen[f"{name}.methods"] = sorted(k for k in ("__eq__", "__repr__", "__hash__", "__setattr__", "__lt__")
                                         if k in vars(cls))
    seen["plain"] = repr(m.Plain("a", 2, ["t"], "hidden"))
    seen["plain_eq"] = (m.Plain("a") == m.Plain("a", secret="other"), m.Plain("a") == m.Plain("b"))
    seen["plain_hash"] = m.Plain.__hash__ is None
    seen["frozen"] = (repr(m.Frozen(1)), m.Frozen(1) < m.Frozen(2), hash(m.Frozen(1)) == hash(m.Frozen(1)))
    with pytest.raises(dataclasses.FrozenInstanceError) as frozen_error:
        m.Frozen(1).x = 2  # type: ignore[misc]
    seen["frozen_error"] = str(frozen_error.value)
    with pytest.raises(TypeError) as missing:
        m.Plain()
    seen["missing_error"] = str(missing.value)
    with pytest.raises(TypeError) as positional:
        m.KeywordsOnly(1)
    seen["positional_error"] = str(positional.value)
    seen["keywords"] = (repr(m.KeywordsOnly(a=1)), m.KeywordsOnly.__slots__)
    seen["hashed"] = (hash(m.Hashed("k", 1)) == hash(m.Hashed("k", 2)), m.Hashed("k") == m.Hashed("k"))
    seen["post"] = repr(m.WithPost(base=4))
    seen["child"] = (repr(m.Child(1, 2.0, (3,))), m.Child(1) == m.Child(1))
    bare = m.Bare(1)
    seen["bare"] = (bare == m.Bare(1), repr(bare).startswith("<"))
    return seen


@pytest.fixture
def unique_names() -> Callable[[], str]:
    counter = iter(range(10**6))
    return lambda: f"catui_dataclass_sample_{os.getpid()}_{next(counter)}"


def test_reused_code_makes_the_classes_the_plain_decorator_makes(tmp_path: Path,
                                                                 unique_names: Callable[[], str]) -> None:
    cache_file = tmp_path / "methods.bin"
    plain = behaviour(load_sample(unique_names()))
    with reused_dataclass_code(write=True, files=[cache_file]) as cold:
        cold_module = load_sample(unique_names())
    assert cold is not None and cold.compiled >= 20 and cold.reused == 0
    assert read_cache_file(cache_file), "the compiled methods were not written"
    with reused_dataclass_code(write=True, files=[cache_file]) as warm:
        warm_module = load_sample(unique_names())
    assert warm is not None and warm.compiled == 0 and warm.reused == cold.compiled
    assert behaviour(cold_module) == plain
    assert behaviour(warm_module) == plain


def test_the_block_leaves_dataclasses_as_it_found_them(tmp_path: Path) -> None:
    assert "exec" not in vars(dataclasses)
    with pytest.raises(RuntimeError, match="inside"), \
            reused_dataclass_code(write=True, files=[tmp_path / "a.bin"]) as outer:
        assert outer is not None and vars(dataclasses)["exec"] == outer.exec
        with reused_dataclass_code(write=True, files=[tmp_path / "b.bin"]) as inner:
            assert inner is None  # the outer block serves and saves
        assert vars(dataclasses)["exec"] == outer.exec
        raise RuntimeError("inside")
    assert "exec" not in vars(dataclasses)
    assert not (tmp_path / "b.bin").exists()


def test_exec_of_anything_but_a_source_text_goes_to_the_builtin(tmp_path: Path) -> None:
    cache = DataclassCodeCache([tmp_path / "c.bin"])
    namespace: dict[str, Any] = {}
    cache.exec(compile("value = 6 * 7", "<test>", "exec"), namespace)
    assert namespace["value"] == 42 and cache.compiled == 0
    cache.exec("other = value + 1", namespace)
    assert namespace["other"] == 43 and cache.compiled == 1


def valid_file(path: Path, unique_name: str) -> bytes:
    with reused_dataclass_code(write=True, files=[path]):
        load_sample(unique_name)
    return path.read_bytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damage=st.one_of(
    st.binary(max_size=2048).map(lambda junk: ("replace", junk, 0)),
    st.tuples(st.just("truncate"), st.just(b""), st.integers(min_value=0, max_value=10**6)),
    st.tuples(st.just("flip"), st.just(b""), st.integers(min_value=0, max_value=10**6)),
))
def test_a_damaged_file_is_ignored_and_written_again(tmp_path: Path, unique_names: Callable[[], str],
                                                     damage: tuple[str, bytes, int]) -> None:
    cache_file = tmp_path / f"{unique_names()}.bin"
    good = valid_file(cache_file, unique_names())
    how, junk, where = damage
    if how == "replace":
        broken = junk
    elif how == "truncate":
        broken = good[:where % len(good)]
    else:
        position = where % len(good)
        broken = good[:position] + bytes([good[position] ^ 0x5A]) + good[position + 1:]
    cache_file.write_bytes(broken)
    plain = behaviour(load_sample(unique_names()))
    with reused_dataclass_code(write=True, files=[cache_file]) as cache:
        module = load_sample(unique_names())
    assert cache is not None and cache.compiled > 0 and cache.reused == 0, "damaged code must never be used"
    assert behaviour(module) == plain
    assert read_cache_file(cache_file), "the damaged file was not replaced by a good one"


def test_a_file_from_another_python_is_not_used(tmp_path: Path, unique_names: Callable[[], str]) -> None:
    cache_file = tmp_path / "methods.bin"
    good = valid_file(cache_file, unique_names())
    header_end = good.index(b"\n", len(FORMAT)) + 1
    payload = good[header_end:]
    assert good[:header_end] == file_header(payload)
    other_python = good[:header_end].replace(sys.version.encode(), b"3.11.0 (other build)")
    assert other_python != good[:header_end]
    cache_file.write_bytes(other_python + payload)
    assert read_cache_file(cache_file) is None
    with reused_dataclass_code(write=True, files=[cache_file]) as cache:
        load_sample(unique_names())
    assert cache is not None and cache.reused == 0


def test_an_oversized_file_is_not_read(tmp_path: Path) -> None:
    from catui.dataclass_code import MAX_FILE_BYTES

    cache_file = tmp_path / "methods.bin"
    with open(cache_file, "wb") as stream:
        stream.write(FORMAT)
        stream.truncate(MAX_FILE_BYTES + 10)
    assert read_cache_file(cache_file) is None


def test_a_full_disk_loses_nothing_and_the_next_place_is_used(tmp_path: Path,
                                                              unique_names: Callable[[], str]) -> None:
    with small_tmpfs(tmp_path / "disk", 64 * 1024) as disk:
        first, second = disk / "cache" / "methods.bin", tmp_path / "elsewhere" / "methods.bin"
        valid_file(first, unique_names())
        before = first.read_bytes()
        fill(disk, 0)
        plain = behaviour(load_sample(unique_names()))
        with reused_dataclass_code(write=True, files=[first, second]) as cache:
            module = load_sample(unique_names())
            dataclasses.make_dataclass("Fresh", [(f"{unique_names()}_field", int)])  # a text not kept yet
        assert cache is not None and cache.compiled > 0
        assert behaviour(module) == plain
        assert first.read_bytes() == before, "a failed write damaged the old file"
        assert [p.name for p in first.parent.iterdir()] == ["methods.bin"], "a temporary file was left behind"
        assert read_cache_file(second), "the second place was not used"


def test_a_read_only_disk_is_read_and_never_written(tmp_path: Path, unique_names: Callable[[], str]) -> None:
    with small_tmpfs(tmp_path / "disk", 4 * 1024 * 1024) as disk:
        cache_file = disk / "methods.bin"
        valid_file(cache_file, unique_names())
        remount_read_only(disk)
        with reused_dataclass_code(write=True, files=[cache_file]) as warm:
            load_sample(unique_names())
        assert warm is not None and warm.reused > 0 and warm.compiled == 0
        with reused_dataclass_code(write=True, files=[cache_file]) as changed:
            dataclasses.make_dataclass("Fresh", [(f"{unique_names()}_field", int)])
        assert changed is not None and changed.compiled > 0  # and saving it failed without a word
        assert read_cache_file(cache_file) is not None


WRITER = textwrap.dedent('''
    import dataclasses, sys
    from pathlib import Path
    from catui.dataclass_code import reused_dataclass_code
    path, tag, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    for round_number in range(rounds):
        with reused_dataclass_code(write=True, files=[path]):
            for index in range(20):
                name = f"field_{tag}_{round_number}_{index}"
                dataclasses.make_dataclass(f"C{index}", [(name, int), ("other", str)], frozen=True)
    print("done")
''')


def run_writers(path: Path, count: int, rounds: int) -> list[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n), str(rounds)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for n in range(count)]


def test_concurrent_writers_leave_a_good_file(tmp_path: Path) -> None:
    cache_file = tmp_path / "methods.bin"
    writers = run_writers(cache_file, 6, 3)
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0 and out.strip() == "done", err
    entries = read_cache_file(cache_file)
    assert entries, "no good file after concurrent writes"
    # A cache may lose another writer's texts in a race (they are compiled again later), but the last
    # writer's own are all there.
    complete = [tag for tag in range(6)
                if all(any(f"field_{tag}_2_{index}:" in source for source in entries) for index in range(20))]
    assert complete, "no writer's last round is in the file"


def test_kill_9_mid_write_leaves_the_old_file_or_a_new_one(tmp_path: Path) -> None:
    cache_file = tmp_path / "methods.bin"
    chooser = random.Random(28)
    for _ in range(6):
        writers = run_writers(cache_file, 2, 400)
        time.sleep(chooser.uniform(0.15, 0.6))
        for writer in writers:
            writer.send_signal(signal.SIGKILL)
            writer.communicate()
        if cache_file.exists():
            assert read_cache_file(cache_file) is not None, "a killed writer left a damaged file"
    assert cache_file.exists(), "no writer got as far as one write in 6 tries"


def test_writing_never_raises(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert write_cache_file(blocked / "methods.bin", {"x": compile("", "<s>", "exec")}) is False


@contextmanager
def loopback_server() -> Iterator[dict[str, str]]:
    from tests.support.anthropic_server import AnthropicTestServer

    script = {"turns": [{"content": [{"type": "text", "text": "pong"}], "repeat": True}]}
    with AnthropicTestServer(script) as server:
        yield server.env()


def cli_env(tmp_path: Path, server_env: dict[str, str], prefix: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CATUI_", "CLAUDE_", "OPENAI_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(server_env, HOME=str(tmp_path / "home"), CATUI_HOME=str(tmp_path / "home" / ".catui"),
               PYTHONPYCACHEPREFIX=str(prefix), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    return env


def run_print(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "catui", "-p", "hi", "--output-format", "json"], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def prefix_file(prefix: Path) -> Path:
    import catui

    package = Path(catui.__file__).resolve().parent
    return Path(prefix, *package.parts[1:]) / f"dataclass-methods.{sys.implementation.cache_tag}.bin"


def test_print_runs_keep_the_code_and_survive_a_damaged_or_read_only_cache(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    with loopback_server() as server_env:
        prefix = tmp_path / "prefix"
        env = cli_env(tmp_path, server_env, prefix)
        first = run_print(env, project)
        assert first.returncode == 0 and '"result": "pong"' in first.stdout, first.stderr
        kept = prefix_file(prefix)
        entries = read_cache_file(kept)
        assert entries and len(entries) > 200, "the print run did not keep its dataclasses' methods"

        kept.write_bytes(kept.read_bytes()[: len(kept.read_bytes()) // 2])  # damaged
        second = run_print(env, project)
        assert second.returncode == 0 and '"result": "pong"' in second.stdout and not second.stderr
        assert read_cache_file(kept), "the damaged file was not written again"

        with small_tmpfs(tmp_path / "ro", 1024 * 1024, read_only=True) as read_only:
            env = cli_env(tmp_path, server_env, read_only)
            third = run_print(env, project)
            assert third.returncode == 0 and '"result": "pong"' in third.stdout and not third.stderr
            assert read_cache_file(tmp_path / "xdg" / "catui" / kept.name), "the user's cache was not used"

        env = {**cli_env(tmp_path, server_env, tmp_path / "off"), "PYTHONDONTWRITEBYTECODE": "1"}
        fourth = run_print(env, project)
        assert fourth.returncode == 0 and '"result": "pong"' in fourth.stdout
        assert not prefix_file(tmp_path / "off").exists(), "PYTHONDONTWRITEBYTECODE did not stop the write"


def test_an_sdk_query_keeps_the_code(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    program = textwrap.dedent('''
        import asyncio, catui
        async def main():
            async for message in catui.query("hi", catui.CatuiOptions(model="sonnet")):
                if isinstance(message, catui.ResultMessage):
                    print(message.result)
        asyncio.run(main())
    ''')
    with loopback_server() as server_env:
        env = cli_env(tmp_path, server_env, tmp_path / "prefix")
        done = subprocess.run([sys.executable, "-c", program], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "pong", done.stderr
    assert "exec" not in vars(dataclasses)
    entries = read_cache_file(prefix_file(tmp_path / "prefix"))
    assert entries and len(entries) > 100


def test_the_default_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(sys, "pycache_prefix", None)
    first, second = cache_file_candidates()
    assert first.parent.name == "__pycache__" and first.parent.parent.name == "catui"
    assert second == tmp_path / "xdg" / "catui" / first.name
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/not/used")
    assert cache_file_candidates()[1].parent == Path(os.path.expanduser("~"), ".cache", "catui")


def test_each_kept_code_is_read_only_when_its_text_comes_up(tmp_path: Path,
                                                            unique_names: Callable[[], str]) -> None:
    cache_file = tmp_path / "methods.bin"
    valid_file(cache_file, unique_names())
    entries = read_cache_file(cache_file)
    assert entries
    used_texts = list(entries)
    damaged_text = used_texts[0]
    # Thousands of texts no run uses, and one used text whose kept code is damaged (a file written by a
    # buggy or older writer): the file stays usable, the unused ones cost nothing, the damaged one is
    # compiled again.
    entries.update({f"def __create_fn__():\n def unused_{n}(self): pass\n return unused_{n}": b"\xff not code"
                    for n in range(1500)})
    entries[damaged_text] = b"\x00 damaged"
    assert write_cache_file(cache_file, entries)
    plain = behaviour(load_sample(unique_names()))
    with reused_dataclass_code(write=True, files=[cache_file]) as cache:
        module = load_sample(unique_names())
    assert cache is not None and cache.compiled == 1 and cache.reused == len(used_texts) - 1
    assert behaviour(module) == plain


def test_the_default_file_is_read_once_per_process(tmp_path: Path) -> None:
    program = textwrap.dedent('''
        import dataclasses
        from catui.dataclass_code import reused_dataclass_code
        with reused_dataclass_code() as first:
            dataclasses.make_dataclass("A", [("only_in_a", int)])
        with reused_dataclass_code() as second:
            dataclasses.make_dataclass("B", [("only_in_b", int)])
        print(first is second, second.compiled, first.files[0].exists())
    ''')
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONPYCACHEPREFIX": str(tmp_path / "prefix")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    runs = [subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    # One cache for both blocks; the first process compiled both classes' methods and wrote them, the second
    # compiled nothing.
    same_cache, compiled, written = runs[0].stdout.split()
    assert (same_cache, written) == ("True", "True") and int(compiled) >= 4
    assert runs[1].stdout.split() == ["True", "0", "True"]
